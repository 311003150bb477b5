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
- entities of a result list (:func:`_result_units`): a ``textarea`` gives the
  value (its texts joined by a space), keyed by the label of its region
  (``labels`` / ``rectanglelabels`` with the same region ``id``: the OCR
  template) or, without one, by its ``from_name``; a ``labels`` result with
  a ``text`` (a span of a text task) and no ``textarea`` gives its text under
  its label; ``choices`` give the chosen values (sorted, joined by ``, ``)
  keyed by ``from_name``. Other result types (``taxonomy``, ``polygon``,
  ``number``, ``relation``, ...) are not supported and counted.
- confidence: the region's ``score`` (of its text result, else its label's,
  else its box's), else the prediction's ``score``, else null (unknown); a
  score outside [0, 1] is an error, never rescaled.
- ``review_seconds``: the chosen annotation's ``lead_time``, at most
  :data:`~rpa_sim.common.limits.MOST_REVIEW_SECONDS`; ``received_at``: the
  task's ``created_at`` (when it entered the review queue), in the years
  :data:`~rpa_sim.common.limits.RECEIVED_YEARS`.
- evidence of a predicted entity: its region's box (:func:`page_box`) in
  pixels of the image when the result gives its size (``original_width``,
  ``original_height``), else in percent of the page, on page ``item_index``
  (0 without one).
- review log (``review_log``): one row per predicted entity of a task with both
  sides, route ``review``, ``correct`` as KIEval labels it against the
  annotation (exact values), the reviewer's value as ``corrected_value``, and
  the ``day`` of the review (:func:`review_day`), for ``rpa-sim watch``.
"""

from __future__ import annotations

import contextlib
import json
import math
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from rpa_sim.common.dates import day_of
from rpa_sim.common.errors import InputError, UsageError
from rpa_sim.common.files import atomic_output, check_output
from rpa_sim.common.inputs import check_input
from rpa_sim.common.limits import MOST_REVIEW_SECONDS, RECEIVED_YEARS
from rpa_sim.records.importers import ImportReport
from rpa_sim.records.importers._json import FieldChecks, load_json, show
from rpa_sim.records.models import (
    Box,
    Entity,
    Evidence,
    Extraction,
    KIERecord,
    PredictedEntity,
    PredictedExtraction,
    instant,
)

__all__ = ["FORMAT", "LABEL_TYPES", "TEXT_SEPARATOR", "CHOICE_SEPARATOR", "EXPORT_META", "RESULTS_EXPORT", "Unit",
           "page_box", "document_stem", "chosen_annotation", "chosen_prediction", "import_label_studio"]

FORMAT = "label-studio"
#: Result types whose labels name a region's field.
LABEL_TYPES = ("labels", "rectanglelabels")
_BOX_TYPES = ("rectangle", "rectanglelabels", "labels", "textarea")
_SUPPORTED = frozenset({"textarea", "choices", "rectangle", *LABEL_TYPES})
#: Joins the texts of one ``textarea`` result (Label Studio keeps each submitted line apart).
TEXT_SEPARATOR = " "
#: Joins the sorted choices of one ``choices`` result.
CHOICE_SEPARATOR = ", "
#: Where a task written by ``rpa-sim export-policy label-studio`` keeps its record id.
EXPORT_META = "rpa_sim"
#: What to do when an export holds prediction ids instead of predictions (Label Studio's issues #5654, #9709).
RESULTS_EXPORT = ("export the tasks with their predictions' results: a snapshot export, POST "
                  "/api/projects/ID/exports/ with {\"serialization_options\": {\"predictions\": {\"only_id\": "
                  "false}}}, then GET /api/projects/ID/exports/EXPORT_ID/download; or read the predictions from GET "
                  "/api/predictions/?project=ID (docs/importers/label-studio.md)")
# Two decimals of a pixel (or of a percent of the page) is finer than any annotation tool draws.
_BOX_DECIMALS = 2
_ENCODE = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode


@dataclass(frozen=True)
class Unit:
    """One ``(key, value)`` read from a result list, with its score and its place on the page.

    ``box`` is ``[x0, y0, x1, y1]`` in pixels when the result gives the page
    size (``original_width``, ``original_height``), else in percent of the
    page; ``pixels`` says which.
    """

    key: str
    value: str
    score: float | None
    page: int
    box: Box | None
    pixels: bool


def page_box(value: Mapping[str, float], width: float | None, height: float | None) -> Box:
    """A region's ``x, y, width, height`` (percent of the page, ``rotation`` in degrees) as ``[x0, y0, x1, y1]``.

    In pixels when the page's ``width`` and ``height`` are given, else in
    percent of the page. A rotated rectangle (turned clockwise about its top
    left corner, as Label Studio turns it) gives the axis-aligned box around it.

    Examples
    --------
    >>> page_box({"x": 10, "y": 20, "width": 50, "height": 5}, 800, 1200)
    (80.0, 240.0, 480.0, 300.0)
    >>> page_box({"x": 10, "y": 20, "width": 50, "height": 5}, None, None)
    (10.0, 20.0, 60.0, 25.0)
    >>> page_box({"x": 10, "y": 10, "width": 20, "height": 10, "rotation": 90}, 100, 100)
    (0.0, 10.0, 10.0, 30.0)
    """
    scale_x = 1.0 if width is None else width / 100.0
    scale_y = 1.0 if height is None else height / 100.0
    x, y = value["x"] * scale_x, value["y"] * scale_y
    w, h = value["width"] * scale_x, value["height"] * scale_y
    angle = math.radians(value.get("rotation") or 0.0)
    cos, sin = math.cos(angle), math.sin(angle)
    xs = [x + dx * cos - dy * sin for dx, dy in ((0, 0), (w, 0), (w, h), (0, h))]
    ys = [y + dx * sin + dy * cos for dx, dy in ((0, 0), (w, 0), (w, h), (0, h))]
    return (round(min(xs), _BOX_DECIMALS) + 0.0, round(min(ys), _BOX_DECIMALS) + 0.0,
            round(max(xs), _BOX_DECIMALS) + 0.0, round(max(ys), _BOX_DECIMALS) + 0.0)


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


class _Checks(FieldChecks):
    """Typed reads whose errors name the export, the task and the field path."""

    def __init__(self, path: str, record_id: str | None = None) -> None:
        self.path, self.record_id = path, record_id

    def error(self, field: str, problem: str) -> InputError:
        return InputError(problem, path=self.path, record_id=self.record_id, field=field or None)

    def score(self, container: Mapping[str, Any], where: str) -> float | None:
        raw = container.get("score")
        if raw is None:
            return None
        score = self.as_number(raw, f"{where}.score")
        if not 0.0 <= score <= 1.0:
            raise self.error(f"{where}.score", f"{show(raw)} is not in [0, 1] (a confidence; a score on another "
                                               f"scale must be converted before import)")
        return score

    def size(self, result: Mapping[str, Any], name: str, where: str) -> float | None:
        raw = result.get(name)
        if raw is None:
            return None
        size = self.as_number(raw, f"{where}.{name}")
        if size <= 0:
            raise self.error(f"{where}.{name}", f"{show(raw)} is not a page size (above 0)")
        return size

    def texts(self, raw: Any, where: str) -> list[str]:
        """A ``text`` or ``labels`` value: a list of strings (a lone string is taken as a list of one)."""
        if isinstance(raw, str):
            return [raw]
        return [self.as_text(item, f"{where}[{i}]") for i, item in enumerate(self.as_list(raw, where))]


@dataclass
class _Region:
    """The results of one region id: its labels, its texts, its box."""

    first: int
    page: int = 0
    labels: tuple[str, ...] = ()
    label_score: float | None = None
    span: str | None = None
    box: Box | None = None
    pixels: bool = False
    box_score: float | None = None
    #: (result index, from_name, text, score) of each text result
    texts: list[tuple[int, str, str, float | None]] = field(default_factory=list)


def _result_units(results: Any, *, checks: _Checks, where: str, unmapped: Counter) -> list[Unit]:
    """The ``(key, value)`` units of one ``result`` list, in the order of the results that give them.

    Parameters
    ----------
    results : list
        A prediction's or an annotation's ``result``.
    checks : object
        Reads values and names the place of a problem.
    where : str
        The field path of ``results``, for messages.
    unmapped : Counter
        Counts what is not mapped, by reason.

    Raises
    ------
    InputError
        For a result that is not an object, a missing ``type`` or ``value``, a
        score outside [0, 1], a box that is not four numbers, ...
    """
    regions: dict[str, _Region] = {}
    choices: list[tuple[int, Unit]] = []
    for index, raw in enumerate(checks.as_list(results, where)):
        at = f"{where}[{index}]"
        result = checks.as_object(raw, at)
        kind = checks.as_text(checks.required(result, "type", at), f"{at}.type")
        if kind not in _SUPPORTED:
            unmapped[f"{kind} results (type not supported)"] += 1
            continue
        value = checks.as_object(checks.required(result, "value", at), f"{at}.value")
        score = checks.score(result, at)
        page = result.get("item_index", 0)
        if isinstance(page, bool) or not isinstance(page, int) or page < 0:
            raise checks.error(f"{at}.item_index", f"expected a page index from 0, got {show(page)}")
        if kind == "choices":
            chosen = checks.texts(checks.required(value, "choices", f"{at}.value"), f"{at}.value.choices")
            if chosen:
                key = checks.as_text(checks.required(result, "from_name", at), f"{at}.from_name")
                choices.append((index, Unit(key, CHOICE_SEPARATOR.join(sorted(chosen)), score, page, None, False)))
            else:
                unmapped["choices results with nothing chosen"] += 1
            continue
        region_id = result.get("id")
        if not isinstance(region_id, (str, int)) or isinstance(region_id, bool):
            region_id = f"#{index}"  # a result without a region id is a region of its own
        region = regions.setdefault(str(region_id), _Region(first=index, page=page))
        if kind == "textarea":
            from_name = checks.as_text(checks.required(result, "from_name", at), f"{at}.from_name")
            text = TEXT_SEPARATOR.join(checks.texts(value.get("text", []), f"{at}.value.text"))
            region.texts.append((index, from_name, text, score))
        elif kind in LABEL_TYPES:
            labels = checks.texts(value.get(kind, []), f"{at}.value.{kind}")
            region.labels = tuple(dict.fromkeys((*region.labels, *labels)))
            region.label_score = score if region.label_score is None else region.label_score
            if "text" in value:
                region.span = checks.as_text(value["text"], f"{at}.value.text")
        else:
            region.box_score = score if region.box_score is None else region.box_score
        if region.box is None and kind in _BOX_TYPES and all(name in value for name in ("x", "y", "width", "height")):
            region.box, region.pixels = _box(result, value, checks, at)
    units = choices + [unit for region in regions.values() for unit in _region_units(region, unmapped)]
    return [unit for _, unit in sorted(units, key=lambda pair: pair[0])]


def _box(result: Mapping[str, Any], value: Mapping[str, Any], checks: _Checks, at: str) -> tuple[Box, bool]:
    for name in ("x", "y", "width", "height", "rotation"):
        if name in value and (name != "rotation" or value[name] is not None):
            number = checks.as_number(value[name], f"{at}.value.{name}")
            if name in ("width", "height") and number < 0:
                raise checks.error(f"{at}.value.{name}", f"{show(value[name])} is negative")
    width, height = checks.size(result, "original_width", at), checks.size(result, "original_height", at)
    if width is None or height is None:
        width = height = None
    box = page_box(value, width, height)
    if not all(math.isfinite(coordinate) for coordinate in box):
        raise checks.error(f"{at}.value", "coordinates too large: the box is beyond any page")
    return box, width is not None


def _region_units(region: _Region, unmapped: Counter) -> list[tuple[int, Unit]]:
    if len(region.labels) > 1:
        unmapped["regions with several labels (which field they are is ambiguous)"] += 1
        return []
    label = region.labels[0] if region.labels else None
    units = []
    if region.texts:
        for index, from_name, text, text_score in region.texts:
            score = next((s for s in (text_score, region.label_score, region.box_score) if s is not None), None)
            units.append((index, Unit(label or from_name, text, score, region.page, region.box, region.pixels)))
    elif label is not None and region.span is not None:
        units.append((region.first, Unit(label, region.span, region.label_score, region.page, region.box,
                                         region.pixels)))
    elif label is not None:
        unmapped["labelled regions without a text"] += 1
    else:
        unmapped["regions with a box alone (no label, no text)"] += 1
    return units


def import_label_studio(source: str | Path, *, id_from: str = "id", review_log: str | Path | None = None,
                        ) -> tuple[Iterator[KIERecord], ImportReport]:
    """Read a Label Studio JSON export into KIE records, and optionally the review log of its annotations.

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
    review_log : path-like, optional
        Where to write the review log (JSON Lines, gzip when the name ends in
        ``.gz``; ``docs/monitoring.md``), atomically, once the records are
        exhausted: a row per predicted entity of each task with both a
        prediction and an annotation.

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
        At the call for a missing source or an unusable ``review_log`` path;
        while iterating for an export that does not fit (not a task or a list
        of them, prediction ids without their results, a score outside
        [0, 1], a negative ``lead_time``, a missing, empty or duplicate id,
        ...), naming the file, the task id and the field.

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
    if id_from != "id" and not (id_from.startswith("data.") and len(id_from) > len("data.")):
        raise UsageError(f"--id-from: expected id or data.KEY (a field of the tasks' data), got {show(id_from)}")
    source = Path(source)
    if not source.exists():
        raise InputError("no such file", path=str(source))
    check_input(source)
    log_path = None if review_log is None else check_output(review_log)
    report = ImportReport(FORMAT)
    report.notes.append("ground truth = the chosen annotation (the latest non-cancelled one marked ground_truth, "
                        "else the latest non-cancelled one); prediction = the prediction it was made from "
                        "(parent_prediction), else the latest")
    return _records(source, id_from, log_path, report), report


def _records(path: Path, id_from: str, log_path: Path | None, report: ImportReport) -> Iterator[KIERecord]:
    checks = _Checks(str(path))
    tasks = load_json(path)
    if isinstance(tasks, dict) and tasks.keys() & {"data", "predictions", "annotations"}:
        tasks = [tasks]  # one task, as Label Studio's documentation writes an example
    if not isinstance(tasks, list):
        raise checks.error("", f"expected a list of tasks or one task (with data, predictions or annotations), "
                               f"got {show(tasks)}")
    if not tasks:
        raise checks.error("", "no tasks: the export is an empty list")
    stats: Counter = Counter()
    rows: list[dict[str, Any]] | None = None if log_path is None else []
    first_index: dict[str, int] = {}
    for index, raw in enumerate(tasks):
        task = _Task(str(path), index, raw, id_from, report.unmapped, stats)
        if task.record_id in first_index:
            raise InputError(f"a second task with this id (the first is task [{first_index[task.record_id]}] of the "
                             f"export); choose another --id-from", path=str(path), record_id=task.record_id,
                             field=f"[{index}].{'id' if id_from == 'id' else id_from}")
        first_index[task.record_id] = index
        record = task.record()
        if record is None:
            continue
        if rows is not None and record.ground_truth is not None and record.prediction is not None:
            rows += task.review_rows(record)
            stats["undated"] += task.day is None
        report.records += 1
        yield record
    if log_path is not None:
        _write_rows(rows or [], log_path)
        reviewed_errors = sum(1 for row in rows or [] if not row["correct"])
        report.notes.append(f"review log {log_path}: {len(rows or []):,} rows (one per predicted entity of the "
                            f"{stats['both']:,} tasks with a prediction and an annotation), all route review; "
                            f"{reviewed_errors:,} found wrong by the reviewers")
        if stats["undated"]:
            report.notes.append(f"review log: {stats['undated']:,} tasks whose annotation has no readable created_at "
                                f"or updated_at: their rows have no day (rpa-sim watch needs one)")
    _add_notes(report, stats)


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


def _write_rows(rows: list[dict[str, Any]], path: Path) -> None:
    with atomic_output(path) as out:
        for row in rows:
            out.write((_ENCODE(row) + "\n").encode("utf-8"))


class _Task:
    """One task of the export, read with checks that name its id and the field of any problem."""

    def __init__(self, path: str, index: int, raw: Any, id_from: str, unmapped: Counter, stats: Counter) -> None:
        self.checks = _Checks(path)
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
        return self.checks.as_object(self.task["data"], f"[{index}].data")

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

    def _truth(self, index: int, annotation: dict[str, Any]) -> Extraction:
        where = f"annotations[{index}]"
        units = _result_units(annotation.get("result") or [], checks=self.checks, where=f"{where}.result",
                             unmapped=self.unmapped)
        return Extraction(entities=[Entity(key=unit.key, value=unit.value)
                                    for unit in self._kept(units, "annotated")])

    def _prediction(self, index: int, prediction: dict[str, Any]) -> PredictedExtraction:
        where = f"predictions[{index}]"
        overall = self.checks.score(prediction, where)
        units = self._kept(_result_units(prediction.get("result") or [], checks=self.checks,
                                         where=f"{where}.result", unmapped=self.unmapped), "predicted")
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

    def review_rows(self, record: KIERecord) -> list[dict[str, Any]]:
        """The review log's rows of this task: one per predicted entity, what the reviewer left in its place."""
        from rpa_sim.evaluate.metrics.kieval import CORRECT, evaluate_document  # noqa: PLC0415

        assert record.ground_truth is not None and record.prediction is not None, "a task with truth and prediction"
        outcome = evaluate_document(record.ground_truth, record.prediction)
        rows = []
        for entity, label, correction in zip(record.prediction.entities, outcome.labels.tolist(),
                                             outcome.corrections, strict=True):
            correct = label == CORRECT
            row = {} if self.day is None else {"day": self.day}
            rows.append({**row, "id": record.id, "key": entity.key, "value": entity.value,
                         "confidence": entity.confidence, "route": "review", "inclusion_probability": 1.0,
                         "correct": correct, "corrected_value": None if correct else correction or ""})
        return rows
