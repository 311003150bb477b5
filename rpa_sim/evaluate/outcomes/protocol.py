"""The :class:`OutcomeTable` protocol: everything stage 2 and the front ends may ask of a table, whatever its task.

What differs between tasks (the metric, the fields, the review units and
their ids, what an error is, what review does to a row, the columns a sweep
reports, the file's columns, the evaluation itself) is a member of the
table, so no code outside :mod:`rpa_sim.evaluate` asks which task a table
is. ``docs/outcomes.md`` tabulates every member for both tasks.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol, runtime_checkable

import numpy as np

if TYPE_CHECKING:
    import pyarrow as pa

    from rpa_sim.evaluate.outcomes.arrow import FileLayout, FileRows

__all__ = ["OutcomeTable", "FieldGrouping", "ReviewValues", "GroundingMode", "ScoreRows"]

GroundingMode = Literal["auto", "given", "compute"]
ScoreRows = list[tuple[str, float | int | None]]


@dataclass(frozen=True, eq=False)
class FieldGrouping:
    """One way of grouping a table's rows into fields, with the per-field figures that do not depend on τ.

    Attributes
    ----------
    by : str
        What the fields are, in words (``"key"``, ``"question type"``, ...).
    codes : ndarray of int
        Each row's field, an index into ``names``.
    names : tuple of str
        The field names.
    figures : dict of str to ndarray
        Per field (aligned with ``names``): ``predictions`` (rows) and the task's
        error counts; integer arrays are counts, float arrays means (NaN for an empty field).
    """

    by: str
    codes: np.ndarray
    names: tuple[str, ...]
    figures: dict[str, np.ndarray]


@dataclass(frozen=True, eq=False)
class ReviewValues:
    """What a review of each row yields, whatever the task: what a production log records (``docs/monitoring.md``).

    Attributes
    ----------
    ids : ndarray of str
        Each row's document id (KIE) or question id (VQA).
    values : ndarray of str
        The value as the model gave it.
    corrections : ndarray of str
        The value a careful reviewer writes in its place (``""``: the value is removed).
    changed : ndarray of bool
        The rows such a reviewer changes (a reviewer's miss leaves them as they are).
    breakable : ndarray of bool
        The rows a reviewer's false correction can break (those already right).
    """

    ids: np.ndarray
    values: np.ndarray
    corrections: np.ndarray
    changed: np.ndarray
    breakable: np.ndarray


@runtime_checkable
class OutcomeTable(Protocol):
    """What every outcome table offers, whatever its task (the table of ``docs/outcomes.md``).

    Class attributes, known without a table (:func:`rpa_sim.evaluate.outcomes.table_type`):

    - ``task`` (``"kie"``, ``"vqa"``) and ``task_description`` (the task in words);
    - ``metric_name`` (the post-correction metric's column) and ``metric_label`` (its display name);
    - ``sweep_columns`` (the post-correction columns a sweep reports after the common ones), of
      which ``fraction_columns`` hold values in [0, 1] and ``count_columns`` expected counts;
    - ``unit_noun``: what a review unit is, a record (``unit_ids()``); ``has_review_units``: whether rows
      group into units that escalation reviews whole (else each row is its own unit);
    - ``field_rate_basis``: what a per-field count's rate is a share of, in words;
    - ``summary_labels``: the corpus figures a reader is shown first, ``(key, label)`` in order: keys of
      :meth:`summary` and ``predictions`` (the rows), which a study's data summary adds;
    - ``options``: the evaluation settings a user chooses (keywords of ``evaluate``);
    - ``has_smudge``: whether rows have SMuDGE scores;
    - ``file_layout``: how the table lies in a Parquet file (:mod:`rpa_sim.evaluate.tablefile`).

    Per row: ``confidence`` and ``grounding`` (NaN when unknown), and ``signals``. Per review unit: ``received_at`` and
    ``review_seconds``. ``document_types``: the records' ``document_type`` names in order of first
    appearance (``""``: not given).
    """

    task: ClassVar[str]
    task_description: ClassVar[str]
    metric_name: ClassVar[str]
    metric_label: ClassVar[str]
    sweep_columns: ClassVar[tuple[str, ...]]
    fraction_columns: ClassVar[frozenset[str]]
    count_columns: ClassVar[frozenset[str]]
    unit_noun: ClassVar[str]
    has_review_units: ClassVar[bool]
    field_rate_basis: ClassVar[str]
    summary_labels: ClassVar[tuple[tuple[str, str], ...]]
    options: ClassVar[tuple[str, ...]]
    #: The modules evaluation imports where it evaluates (the metrics, and what they need): imported once before
    #: worker processes fork, so that each worker does not import them again (:mod:`rpa_sim.evaluate.local`).
    evaluation_modules: ClassVar[tuple[str, ...]]
    has_smudge: ClassVar[bool]
    file_layout: ClassVar[FileLayout]

    @property
    def confidence(self) -> np.ndarray: ...

    @property
    def grounding(self) -> np.ndarray: ...

    @property
    def signals(self) -> dict[str, np.ndarray]:
        """Per named signal (in order of first appearance), a column aligned with the rows; NaN where a row
        lacks it (docs/signals.md)."""
        ...

    @property
    def document_types(self) -> tuple[str, ...]: ...

    @property
    def received_at(self) -> np.ndarray:
        """Per review unit (aligned with :meth:`unit_ids`): its arrival in seconds since 1970-01-01T00:00Z, or NaN."""
        ...

    @property
    def review_seconds(self) -> np.ndarray:
        """Per review unit: the seconds a person took to review it, NaN where the record does not say."""
        ...

    def __len__(self) -> int:
        """The rows: prediction units a policy can route."""
        ...

    # -- evaluation and files -------------------------------------------------------------------------

    @classmethod
    def evaluate(cls, records: Iterable[Any], *, grounding: GroundingMode = "auto") -> OutcomeTable:
        """The table of ``records`` (streamed, consumed once), with the task's settings as keywords."""
        ...

    @classmethod
    def concat(cls, tables: list[Any]) -> OutcomeTable:
        """Tables of this task joined in order (:func:`rpa_sim.evaluate.outcomes.concat_tables` checks them)."""
        ...

    def evaluation_settings(self) -> dict[str, str | float]:
        """The settings the table was evaluated with, by name (``file_layout.settings``)."""
        ...

    @classmethod
    def check_settings(cls, settings: Mapping[str, str | float]) -> None:
        """Raise ValueError unless ``settings`` (read from a file) are values evaluation can have."""
        ...

    def row_counts(self) -> dict[str, int]:
        """The rows of each kind the table's file holds (``file_layout.row_kinds``)."""
        ...

    def corpus_counts(self) -> dict[str, int]:
        """The corpus counts a file's metadata records (``file_layout.counts``)."""
        ...

    def to_arrow(self) -> dict[str, pa.Array]:
        """The file's columns (``file_layout.columns``) as Arrow arrays, by name."""
        ...

    @classmethod
    def from_arrow(cls, rows: FileRows) -> OutcomeTable:
        """The table a file's checked columns hold, exactly as evaluation gave it; refuses what contradicts."""
        ...

    # -- units and fields -----------------------------------------------------------------------------

    def unit_ids(self) -> np.ndarray:
        """Each review unit's id: its record's (``unit_count`` of them, in record order)."""
        ...

    @property
    def document_type_codes(self) -> np.ndarray:
        """Each row's document type, an index into :attr:`document_types`."""
        ...

    @property
    def field_names(self) -> tuple[str, ...]:
        """The fields a policy's ``fields`` thresholds and the per-field optimizer name."""
        ...

    @property
    def field_codes(self) -> np.ndarray:
        """Each row's field, an index into :attr:`field_names`."""
        ...

    def field_groupings(self) -> list[FieldGrouping]:
        """The groupings the dashboard shows; the first is :attr:`field_names` / :attr:`field_codes`."""
        ...

    @property
    def review_units(self) -> np.ndarray | None:
        """Each row's review unit (escalated and certified together), or None: every row is its own unit."""
        ...

    @property
    def unit_count(self) -> int:
        """How many review units the data has (units without rows included)."""
        ...

    def missed_per_unit(self) -> np.ndarray:
        """Per review unit, the missed values a whole-unit review can add (empty without units)."""
        ...

    # -- figures --------------------------------------------------------------------------------------

    def errors(self) -> np.ndarray:
        """Whether each row is an error (``docs/errors.md``)."""
        ...

    def summary(self) -> dict[str, Any]:
        """The corpus figures: the ``score --json`` payload of docs/formats.md."""
        ...

    def review_values(self) -> ReviewValues:
        """Per row: its id, its value, what review writes in its place and which rows review changes or can break."""
        ...

    @property
    def score_title(self) -> str:
        """The first line of ``rpa-sim score``'s text report."""
        ...

    def score_rows(self) -> ScoreRows:
        """The rows (label, value) of ``rpa-sim score``'s text report; None for an undefined figure."""
        ...

    def smudge_by_alpha(self, *, step: float) -> tuple[np.ndarray, np.ndarray] | None:
        """Mean SMuDGE against alpha over the rows with OCR; None without SMuDGE scores or without such rows."""
        ...

    def mean_smudge(self, *, alpha: float) -> float | None:
        """Mean SMuDGE at ``alpha`` over the rows with OCR; None without SMuDGE scores or without such rows."""
        ...

    # -- review ---------------------------------------------------------------------------------------

    def replay_terms(self, *, miss: float | np.ndarray,
                     false_correction: float | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per quantity (row) and table row (column): its value when accepted and its expectation when reviewed."""
        ...

    def replay_figures(self, totals: np.ndarray, added: np.ndarray) -> tuple[dict[str, np.ndarray], np.ndarray]:
        """The :attr:`sweep_columns` and the residual errors, from summed replay quantities."""
        ...

    def target_costs(self, target: float, *, miss_rate: float,
                     false_correction_rate: float) -> tuple[np.ndarray, np.ndarray, float]:
        """Per-row costs when accepted and when reviewed, and the budget within which the metric reaches ``target``."""
        ...
