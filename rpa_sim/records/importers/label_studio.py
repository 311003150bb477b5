"""Import Label Studio JSON exports: the reviewer's annotation as ground truth, the model's prediction beside it.

A Label Studio export is a list of tasks (or one task). A task has
``data`` (what was labelled: an image URL, a text), ``predictions`` (a model's
pre-annotations: ``result``, ``score``, ``model_version``) and ``annotations``
(what people submitted: ``result``, ``lead_time`` in seconds, ``created_at``,
``completed_by``, ``was_cancelled``, ``ground_truth``, ``parent_prediction``).
A ``result`` is a list of region results, each with ``id`` (the region),
``type``, ``from_name`` (the control tag) and ``value``.

Mapping (one KIE record per task; ``docs/importers/label-studio.md``):

- id: the task's ``id`` (else ``meta.rpa_sim.id``, the record id that
  ``rpa-sim export-policy label-studio`` writes), or the file name (without
  extension) of a ``data`` field that references the document
  (``id_from="data.image"``). A task without ``data``, ``predictions`` or
  ``annotations`` is its own data, as Label Studio reads it.
- predictions given as ids only (``"predictions": [286]``: the JSON export of
  current Label Studio) are an error that says how to export the results.
- ground truth: the chosen annotation (:func:`chosen_annotation`: the latest
  non-cancelled one marked ``ground_truth``, else the latest non-cancelled
  one); prediction: the chosen prediction (:func:`chosen_prediction`: the one
  the annotation started from, ``parent_prediction``, else the latest).
- entities: the units of a result list
  (:func:`~rpa_sim.records.importers.label_studio_results.result_units`:
  texts keyed by their region's label, spans, choices); other result types
  are not supported and counted.
- confidence: the unit's score (its region's), else the prediction's
  ``score``, else null (unknown); a score outside [0, 1] is an error, never
  rescaled.
- ``review_seconds``: the chosen annotation's ``lead_time``, at most
  :data:`~rpa_sim.common.limits.MOST_REVIEW_SECONDS`; ``received_at``: the
  task's ``created_at`` (when it entered the review queue), in the years
  :data:`~rpa_sim.common.limits.RECEIVED_YEARS`.
- evidence of a predicted entity: its region's box
  (:func:`~rpa_sim.records.importers.label_studio_results.page_box`) in
  pixels of the image when the result gives its size (``original_width``,
  ``original_height``), else in percent of the page, on page ``item_index``
  (0 without one).
- the day of the review (:func:`review_day`) comes with each record from
  :func:`read_label_studio`, for the review log that
  :mod:`rpa_sim.operate.monitoring.reviews` grades and writes (``--review-log``).

Tasks are read by the rules every importer shares
(:func:`~rpa_sim.records.importers.sources.each_source`): a task whose
prediction (or annotation) holds results none of which could be mapped is an
error, never an empty side; ``skip_invalid`` leaves out a task with a problem;
``join_lines`` writes each line break of a value, on both sides, as a space.
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, NamedTuple

from rpa_sim.common.dates import day_of
from rpa_sim.common.errors import InputError, UsageError
from rpa_sim.common.inputs import check_input
from rpa_sim.common.limits import MOST_REVIEW_SECONDS, RECEIVED_YEARS
from rpa_sim.records.importers import ImportReport
from rpa_sim.records.importers._json import load_json, show
from rpa_sim.records.importers.label_studio_results import TaskChecks, Unit, result_units
from rpa_sim.records.importers.sources import each_source
from rpa_sim.records.models import (
    Entity,
    Evidence,
    Extraction,
    KIERecord,
    PredictedEntity,
    PredictedExtraction,
    instant,
)

__all__ = ["FORMAT", "EXPORT_META", "RESULTS_EXPORT", "Reviewed", "document_stem", "chosen_annotation",
           "chosen_prediction", "import_label_studio", "read_label_studio", "review_day"]

FORMAT = "label-studio"
#: Where a task written by ``rpa-sim export-policy label-studio`` keeps its record id.
EXPORT_META = "rpa_sim"
#: What to do when an export holds prediction ids instead of predictions (Label Studio's issues #5654, #9709).
RESULTS_EXPORT = ("export the tasks with their predictions' results: a snapshot export, POST "
                  "/api/projects/ID/exports/ with {\"serialization_options\": {\"predictions\": {\"only_id\": "
                  "false}}}, then GET /api/projects/ID/exports/EXPORT_ID/download; or read the predictions from GET "
                  "/api/predictions/?project=ID (docs/importers/label-studio.md)")
# the sides' words in the report's reasons, and the reasons that lose no value (nothing was given, or its place
# was given without it)
_SIDES = ("predicted", "annotated")
_NO_VALUE = ("values that are blank (nothing to compare)", "choices results with nothing chosen",
             "labelled regions without a text", "regions with a box alone (no label, no text)")
_NOT_LOST = frozenset(f"{side} {reason}" for side in _SIDES for reason in _NO_VALUE)


def document_stem(reference: str) -> str:
    """The id a document reference gives: a URL's or path's file name without its extension, else as written.

    Examples
    --------
    >>> document_stem("s3://receipts/2024/r-0007.png?X-Amz-Signature=abc")
    'r-0007'
    >>> document_stem("/data/upload/3/5e1d2c4a-invoice 12.pdf"), document_stem("INV-2024.001")
    ('5e1d2c4a-invoice 12', 'INV-2024.001')
    """
    if "/" not in reference:
        return reference
    name = reference.split("?", 1)[0].split("#", 1)[0].rstrip("/").rsplit("/", 1)[-1]
    stem = name.rsplit(".", 1)[0] if "." in name.lstrip(".") else name
    return stem or reference


def _when(item: Mapping[str, Any]) -> datetime | None:
    try:
        return instant(item.get("created_at"))
    except ValueError:
        return None


def review_day(annotation: Mapping[str, Any]) -> str | None:
    """The day a review was done: the date of the annotation's ``created_at`` (when the reviewer submitted it),
    else of its ``updated_at``, as written in its own offset; None when neither reads as a date and time.

    >>> review_day({"created_at": "2024-03-05T23:40:02.117Z", "updated_at": "2024-03-07T08:00:00Z"})
    '2024-03-05'
    >>> review_day({"created_at": None, "updated_at": "2024-03-06T01:00:00+09:00"}), review_day({})
    ('2024-03-06', None)
    """
    for name in ("created_at", "updated_at"):
        with contextlib.suppress(ValueError):
            return day_of(annotation.get(name), column="received_at")
    return None


def _latest(items: list[tuple[int, dict[str, Any]]]) -> tuple[int, dict[str, Any]]:
    # by created_at when every item has a readable one, else the last listed (Label Studio lists oldest first)
    times = [_when(item) for _, item in items]
    if all(time is not None for time in times):
        return items[max(range(len(items)), key=lambda i: (times[i], i))]
    return items[-1]


def chosen_annotation(annotations: list[dict[str, Any]]) -> tuple[int, dict[str, Any]] | None:
    """The annotation taken as ground truth, with its index; None when every one was cancelled (or there is none).

    Cancelled (skipped) annotations are never taken. Among the others, those
    marked ``ground_truth`` come first; among those, the latest by
    ``created_at`` (the last listed when a time is missing).

    Examples
    --------
    >>> chosen_annotation([{"id": 1, "created_at": "2024-05-02T10:00:00Z"},
    ...                    {"id": 2, "created_at": "2024-05-01T10:00:00Z", "ground_truth": True},
    ...                    {"id": 3, "created_at": "2024-05-03T10:00:00Z", "was_cancelled": True}])[1]["id"]
    2
    >>> chosen_annotation([{"id": 1, "was_cancelled": True}]) is None
    True
    """
    usable = [(i, a) for i, a in enumerate(annotations) if not a.get("was_cancelled")]
    if not usable:
        return None
    marked = [(i, a) for i, a in usable if a.get("ground_truth") is True]
    return _latest(marked or usable)


def chosen_prediction(predictions: list[dict[str, Any]],
                      annotation: Mapping[str, Any] | None) -> tuple[int, dict[str, Any]] | None:
    """The prediction taken as the model's output, with its index; None when there is none.

    The one the annotation was made from (its ``parent_prediction`` is the
    prediction's ``id``): what the reviewer saw and corrected. Otherwise the
    latest by ``created_at`` (the last listed when a time is missing).

    Examples
    --------
    >>> chosen_prediction([{"id": 7}, {"id": 8}], {"parent_prediction": 7})[1]["id"]
    7
    >>> chosen_prediction([{"id": 7}, {"id": 8}], None)[1]["id"]
    8
    """
    if not predictions:
        return None
    parent = None if annotation is None else annotation.get("parent_prediction")
    if parent is not None:
        for index, prediction in enumerate(predictions):
            if prediction.get("id") == parent:
                return index, prediction
    return _latest(list(enumerate(predictions)))


class Reviewed(NamedTuple):
    """A record of the export and the day of its review (:func:`review_day` of the chosen annotation; None
    without one)."""

    record: KIERecord
    day: str | None


def import_label_studio(source: str | Path, *, id_from: str = "id", skip_invalid: bool = False,
                        join_lines: bool = False) -> tuple[Iterator[KIERecord], ImportReport]:
    """Read a Label Studio JSON export into KIE records.

    Parameters
    ----------
    source : path-like
        The export: a JSON list of tasks, or one task, with the predictions'
        results (``docs/importers/label-studio.md`` says which export).
    id_from : str, default="id"
        ``"id"`` (the task's id, else the record id of a task rpa-sim
        exported) or ``"data.KEY"``: the document reference ``data[KEY]``, a
        URL or path giving its file name without extension
        (:func:`document_stem`).
    skip_invalid : bool, default=False
        Leave out (and list) a task with a problem rather than stop
        (:func:`~rpa_sim.records.importers.sources.each_source`).
    join_lines : bool, default=False
        Write each line break of a value (a ``textarea`` of several lines, a
        span over lines) as a space, on both sides: the prediction and the
        annotation the reviewer typed in the same tool.

    Returns
    -------
    records : iterator of KIERecord
        One per task that has a prediction or a usable annotation, lazily, in
        the export's order.
    report : ImportReport
        ``records`` and ``unmapped`` grow as the records are produced; the
        notes with counts are added when the iterator is exhausted.

    Raises
    ------
    UsageError
        At the call, for an ``id_from`` that is neither ``id`` nor ``data.KEY``.
    InputError
        At the call for a missing source; while iterating for an export that
        does not fit (not a task or a list of them, prediction ids without
        their results, a score outside [0, 1], a negative ``lead_time``, a
        missing, empty or duplicate id, a prediction or annotation none of
        whose results could be mapped, ...), naming the file, the task id and
        the field.

    See Also
    --------
    read_label_studio : the records with the day of their review, for the review log.

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> task = {"id": 7, "data": {"image": "/data/upload/1/receipt-7.png"},
    ...     "predictions": [{"id": 1, "score": 0.8, "result": [
    ...         {"id": "a", "type": "textarea", "from_name": "total", "to_name": "image",
    ...          "value": {"text": ["9.50"]}, "score": 0.93}]}],
    ...     "annotations": [{"id": 3, "lead_time": 12.5, "parent_prediction": 1, "result": [
    ...         {"id": "a", "type": "textarea", "from_name": "total", "to_name": "image",
    ...          "value": {"text": ["9.80"]}}]}]}
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "export.json"
    >>> _ = path.write_text(json.dumps([task]))
    >>> records, report = import_label_studio(path, id_from="data.image")
    >>> record = next(records)
    >>> predicted = record.prediction.entities[0]
    >>> record.id, record.ground_truth.entities, (predicted.value, predicted.confidence), record.review_seconds
    ('receipt-7', [Entity(key='total', value='9.80')], ('9.50', 0.93), 12.5)
    """
    reviewed, report = read_label_studio(source, id_from=id_from, skip_invalid=skip_invalid, join_lines=join_lines)
    return (item.record for item in reviewed), report


def read_label_studio(source: str | Path, *, id_from: str = "id", skip_invalid: bool = False,
                      join_lines: bool = False) -> tuple[Iterator[Reviewed], ImportReport]:
    """The records of :func:`import_label_studio`, each with the day of its review (:class:`Reviewed`).

    The day is the date of the chosen annotation's ``created_at`` (:func:`review_day`): what the review log of
    ``rpa-sim import label-studio --review-log`` (:mod:`rpa_sim.operate.monitoring.reviews`) writes as each
    row's ``day``. Parameters, errors and the report are :func:`import_label_studio`'s.
    """
    if id_from != "id" and not (id_from.startswith("data.") and len(id_from) > len("data.")):
        raise UsageError(f"--id-from: expected id or data.KEY (a field of the tasks' data), got {show(id_from)}")
    source = Path(source)
    if not source.exists():
        raise InputError("no such file", path=str(source))
    check_input(source)
    report = ImportReport(FORMAT)
    report.notes.append("ground truth = the chosen annotation (the latest non-cancelled one marked ground_truth, "
                        "else the latest non-cancelled one); prediction = the prediction it was made from "
                        "(parent_prediction), else the latest")
    export = _Export(source, id_from, report)
    records = each_source(export.tasks(), export.read, report=report, skip_invalid=skip_invalid,
                          join_lines=join_lines, not_lost=_NOT_LOST, truth_lost=_is_annotated)
    return export.reviewed(records), report


def _is_annotated(reason: str) -> bool:
    return reason.startswith(f"{_SIDES[1]} ")


@dataclass(frozen=True)
class _TaskUnit:
    """One task of the export, as the import reads it; named by the export in messages."""

    path: str
    index: int
    raw: Any

    def __str__(self) -> str:
        return self.path


class _Export:
    """The tasks of one export, read one at a time; what a task counted joins the report once its record is
    written (a task skipped counts nothing)."""

    def __init__(self, path: Path, id_from: str, report: ImportReport) -> None:
        self.path, self.id_from, self.report = path, id_from, report
        self.stats: Counter = Counter()
        self.first_index: dict[str, int] = {}
        # the review day and the counts of each record read, until it is written
        self.pending: dict[str, tuple[str | None, Counter]] = {}

    def tasks(self) -> Iterator[_TaskUnit]:
        checks = TaskChecks(str(self.path))
        tasks = load_json(self.path)
        if isinstance(tasks, dict) and tasks.keys() & {"data", "predictions", "annotations"}:
            tasks = [tasks]  # one task, as Label Studio's documentation writes an example
        if not isinstance(tasks, list):
            raise checks.error("", f"expected a list of tasks or one task (with data, predictions or annotations), "
                                   f"got {show(tasks)}")
        if not tasks:
            raise checks.error("", "no tasks: the export is an empty list")
        return (_TaskUnit(str(self.path), index, raw) for index, raw in enumerate(tasks))

    def read(self, unit: _TaskUnit) -> Iterator[KIERecord]:
        stats: Counter = Counter()
        task = _Task(unit.path, unit.index, unit.raw, self.id_from, self.report.unmapped, stats)
        first = self.first_index.get(task.record_id)
        if first is not None:
            raise InputError(f"a second task with this id (the first is task [{first}] of the export); choose "
                             f"another --id-from", path=unit.path, record_id=task.record_id,
                             field=f"[{unit.index}].{'id' if self.id_from == 'id' else self.id_from}")
        record = task.record()
        self.first_index[task.record_id] = unit.index
        if record is None:  # a task with neither side: nothing to write, nothing to skip
            self.stats.update(stats)
            return
        self.pending[record.id] = (task.day, stats)
        yield record

    def reviewed(self, records: Iterator[KIERecord]) -> Iterator[Reviewed]:
        for record in records:
            day, stats = self.pending.pop(record.id)
            self.stats.update(stats)
            self.report.records += 1
            yield Reviewed(record, day)
        _add_notes(self.report, self.stats)


def _add_notes(report: ImportReport, stats: Counter) -> None:
    counts = [
        ("tasks with a prediction and an annotation", stats["both"]),
        ("tasks without a usable annotation (records with the prediction only)", stats["prediction_only"]),
        ("tasks without a prediction (records with the ground truth only)", stats["truth_only"]),
        ("tasks with neither (no record)", stats["neither"]),
        ("tasks without data, read as their own data as Label Studio imports them (no prediction, no annotation)",
         stats["flat"]),
        ("cancelled (skipped) annotations, never used", stats["cancelled"]),
        ("tasks with several usable annotations (one chosen)", stats["several_annotations"]),
        ("tasks with several predictions (one chosen)", stats["several_predictions"]),
        ("predicted entities with the region's score as confidence", stats["region_score"]),
        ("predicted entities with the prediction's score as confidence", stats["prediction_score"]),
        ("predicted entities without a score: confidence null (a policy must set missing_confidence)",
         stats["no_score"]),
        ("records with review_seconds (the annotation's lead_time)", stats["lead_time"]),
        ("predicted entities with their region's box as evidence, in pixels of the image", stats["pixel_boxes"]),
        ("predicted entities with their region's box as evidence, in percent of the page (the result gives no "
         "original_width and original_height)", stats["percent_boxes"]),
    ]
    report.notes += [f"{what}: {count:,}" for what, count in counts if count]
    if stats["prediction_only"] or stats["truth_only"]:
        report.notes.append("some records hold one side only: score the file with --skip-invalid, which skips "
                            "and counts them")


class _Task:
    """One task of the export, read with checks that name its id and the field of any problem."""

    def __init__(self, path: str, index: int, raw: Any, id_from: str, unmapped: Counter, stats: Counter) -> None:
        self.checks = TaskChecks(path)
        self.unmapped, self.stats = unmapped, stats
        self.task = self.checks.as_object(raw, f"[{index}]")
        # a task without data, predictions or annotations is all data, as Label Studio imports it ({"text": ...}):
        # no id, no predictions, no annotations of its own
        self.flat = not self.task.keys() & {"data", "predictions", "annotations"}
        self.record_id = self._id(index, id_from)
        # from here on a message names the task by its id, and fields from the task
        self.checks.record_id = self.record_id
        self.day: str | None = None  # the day of the chosen annotation, for the review log

    def _id(self, index: int, id_from: str) -> str:
        if id_from == "id":
            where, raw = f"[{index}].id", None if self.flat else self.task.get("id")
            if raw is None and not self.flat:
                where, raw = f"[{index}].meta.{EXPORT_META}.id", self._exported_id()
            if raw is None:
                keys = ", ".join(sorted(self._data(index))) or "none"
                raise self.checks.error(f"[{index}].id", f"missing: a task has an id once Label Studio holds it (a "
                                                         f"file of tasks to import has none); give --id-from "
                                                         f"data.KEY, the document the task references (its data "
                                                         f"keys: {keys})")
            if isinstance(raw, bool) or not isinstance(raw, (int, str)):
                raise self.checks.error(where, f"expected a task id (a number or a string), got {show(raw)}")
            record_id = str(raw)
        else:
            data, key = self._data(index), id_from[len("data."):]
            where, raw = f"[{index}].{id_from}", self.checks.required(data, key, f"[{index}].data")
            if isinstance(raw, bool) or not isinstance(raw, (int, str)):
                raise self.checks.error(where, f"expected a document reference (a string or a number), got "
                                               f"{show(raw)}")
            record_id = document_stem(str(raw))
        if not record_id.strip():
            raise self.checks.error(where, f"{show(raw)} is empty: it cannot be an id")
        return record_id

    def _data(self, index: int) -> dict[str, Any]:
        """The task's ``data``; a task without one is its own data, as Label Studio imports it."""
        if self.flat:
            return self.task
        return self.checks.as_object(self.checks.required(self.task, "data", f"[{index}]"), f"[{index}].data")

    def _exported_id(self) -> Any:
        """The record id of a task that ``rpa-sim export-policy label-studio`` wrote, or None."""
        meta = self.task.get("meta")
        about = meta.get(EXPORT_META) if isinstance(meta, dict) else None
        return about.get("id") if isinstance(about, dict) else None

    def _list(self, name: str) -> list[dict[str, Any]]:
        if self.flat:
            return []
        items = self.checks.as_list(self.task.get(name) or [], name)
        for i, item in enumerate(items):
            if name == "predictions" and isinstance(item, int) and not isinstance(item, bool):
                raise self.checks.error(f"{name}[{i}]", f"{item} is a prediction's id, not the prediction: this "
                                                        f"export holds prediction ids only, as Label Studio's "
                                                        f"Export -> JSON writes them; {RESULTS_EXPORT}")
        return [self.checks.as_object(item, f"{name}[{i}]") for i, item in enumerate(items)]

    def record(self) -> KIERecord | None:
        annotations, predictions = self._list("annotations"), self._list("predictions")
        self.stats["flat"] += self.flat
        for i, given in enumerate(annotations):
            for flag in ("was_cancelled", "ground_truth"):
                if given.get(flag) is not None and not isinstance(given[flag], bool):
                    raise self.checks.error(f"annotations[{i}].{flag}",
                                            f"expected true or false, got {show(given[flag])}")
        self.stats["cancelled"] += sum(1 for a in annotations if a.get("was_cancelled"))
        annotation = chosen_annotation(annotations)
        prediction = chosen_prediction(predictions, None if annotation is None else annotation[1])
        self.stats["several_annotations"] += sum(1 for a in annotations if not a.get("was_cancelled")) > 1
        self.stats["several_predictions"] += len(predictions) > 1
        if annotation is None and prediction is None:
            self.stats["neither"] += 1
            return None
        self.stats["both" if annotation and prediction else "truth_only" if annotation else "prediction_only"] += 1
        review_seconds = None if annotation is None else self._lead_time(*annotation)
        self.day = None if annotation is None else review_day(annotation[1])
        return KIERecord(id=self.record_id,
                         ground_truth=None if annotation is None else self._truth(*annotation),
                         prediction=None if prediction is None else self._prediction(*prediction),
                         received_at=self._received_at(), review_seconds=review_seconds)

    def _kept(self, units: list[Unit], side: str) -> list[Unit]:
        # scoring leaves a blank value out (KIEval ignores empty values); leaving it out here keeps the review
        # log's rows in step with the predicted entities
        kept = [unit for unit in units if unit.value.strip()]
        if len(kept) < len(units):
            self.unmapped[f"{side} values that are blank (nothing to compare)"] += len(units) - len(kept)
        return kept

    def _results(self, container: dict[str, Any], where: str) -> Any:
        """A prediction's or annotation's ``result``: ``[]`` says it found no region; without one it says nothing,
        and reading it as "no value" would turn a cut export into a model that predicts nothing."""
        results = container.get("result")
        if results is None:
            raise self.checks.error(f"{where}.result", "missing: a prediction or annotation lists its regions in "
                                                       "'result' ([] when it has none)")
        return results

    def _truth(self, index: int, annotation: dict[str, Any]) -> Extraction:
        where = f"annotations[{index}]"
        units = result_units(self._results(annotation, where), checks=self.checks, where=f"{where}.result",
                              unmapped=self.unmapped, side=_SIDES[1])
        return Extraction(entities=[Entity(key=unit.key, value=unit.value)
                                    for unit in self._kept(units, _SIDES[1])])

    def _prediction(self, index: int, prediction: dict[str, Any]) -> PredictedExtraction:
        where = f"predictions[{index}]"
        overall = self.checks.score(prediction, where)
        units = self._kept(result_units(self._results(prediction, where), checks=self.checks,
                                         where=f"{where}.result", unmapped=self.unmapped, side=_SIDES[0]),
                           _SIDES[0])
        entities = []
        for unit in units:
            confidence = unit.score if unit.score is not None else overall
            self.stats["region_score" if unit.score is not None else
                       "prediction_score" if overall is not None else "no_score"] += 1
            evidence = None
            if unit.box is not None:
                evidence = [Evidence(page=unit.page, bbox=unit.box)]
                self.stats["pixel_boxes" if unit.pixels else "percent_boxes"] += 1
            entities.append(PredictedEntity(key=unit.key, value=unit.value, confidence=confidence,
                                            evidence=evidence))
        return PredictedExtraction(entities=entities)

    def _lead_time(self, index: int, annotation: dict[str, Any]) -> float | None:
        raw = annotation.get("lead_time")
        if raw is None:
            return None
        seconds = self.checks.as_number(raw, f"annotations[{index}].lead_time")
        if seconds < 0:
            raise self.checks.error(f"annotations[{index}].lead_time", f"{show(raw)} is negative")
        if seconds > MOST_REVIEW_SECONDS:
            raise self.checks.error(f"annotations[{index}].lead_time",
                                    f"{seconds:g} seconds is more than the {MOST_REVIEW_SECONDS:,} of a day: a "
                                    f"timer left running, not a review; correct it or leave lead_time out")
        self.stats["lead_time"] += 1
        return seconds

    def _received_at(self) -> datetime | None:
        raw = self.task.get("created_at")
        try:
            received = instant(raw)
        except ValueError as error:
            raise self.checks.error("created_at", str(error)) from None
        first, last = RECEIVED_YEARS
        if received is not None and not first <= received.year <= last:
            raise self.checks.error("created_at", f"{show(raw)} is not in the years {first} to {last}")
        return received
