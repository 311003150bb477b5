"""Import a JSON or JSON Lines output no other importer knows, through a mapping file that says where things are.

An in-house service or an LLM extractor writes its own JSON. A small YAML file
(:class:`Mapping`, checked by pydantic, unknown settings refused) names, with
the paths of :mod:`rpa_sim.records.importers.jsonpath` (``$.a.b``, ``a[*]``,
``a[0]``, ``*`` over an object's keys binding them), where each record is,
its id, its predicted fields and, per field, the key, value, confidence, box
and page; optionally where its ground truth is (``docs/importers/mapping.md``).

Mapping (one KIE record per record the ``records`` path finds):

- id: the ``id`` path's one value, a string or an integer.
- prediction: one entity per value of the ``fields`` path; its key is the
  ``key`` path's value (from the field, ``@``, or the record, ``$``) or, by
  default, the object keys the ``*`` steps of ``fields`` bound, joined by
  ``.``; its value is the ``value`` path's (default ``@``, the field itself),
  a string, number or boolean as text (:func:`~rpa_sim.records.importers.service.value_text`);
  a null value drops the field (counted: the output found none), and so
  does a value path that matches nothing in a field (counted as lost: a
  record all of whose values are so is an error, never an empty record).
- confidence: the ``confidence`` path's number (or a string that reads as
  one) divided by ``confidence_scale``, in [0, 1]; no confidence path, no
  match or null: null (unknown), counted, never invented.
- signals: each of ``signals`` (``{name: path}``, or ``{name: {path, scale}}``)
  a named signal of the entity (``docs/signals.md``): its path's number (or a
  string that reads as one) divided by its ``scale`` (1 unless said), in
  [0, 1]; no match or null: the entity lacks that signal (counted), never
  invented.
- evidence: the ``box`` path's four numbers (``box_format`` ``xyxy`` or
  ``xywh``, in the service's units) on page ``page`` (counted from
  ``first_page``; the first page without a page path).
- ground truth: the ``ground_truth`` section's paths, or ``--ground-truth``
  (:func:`~rpa_sim.records.importers.service.read_ground_truth`); ``--fields`` renames
  the predicted keys (:class:`~rpa_sim.records.importers.service.FieldMap`).

Every path must match something in the first record, or the import stops
with an error naming the setting, the path, the file and line, and the
mapping's line: a misspelt path would otherwise give every record null
confidences or no fields; ``--skip-invalid`` does not skip it. Later records
may lack a field's optional parts; a later record (or JSON value) with a
problem is left out and listed with ``--skip-invalid``.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, model_validator

from rpa_sim.common.errors import InputError, UsageError, shown
from rpa_sim.common.files import check_output
from rpa_sim.common.inputs import check_input, input_lines
from rpa_sim.common.validation import StrictModel
from rpa_sim.common.yamlfile import field_line, read_yaml, validated
from rpa_sim.records.importers import ImportReport
from rpa_sim.records.importers._json import is_finite_number, load_json, parse_line
from rpa_sim.records.importers.jsonpath import JsonPath, Match, parse_path
from rpa_sim.records.importers.mapping_log import LogMapping, LogRows
from rpa_sim.records.importers.service import FieldMap, joined_records, read_joins, value_text
from rpa_sim.records.importers.sources import StopImport, each_source, join_lines
from rpa_sim.records.models import Entity, Evidence, Extraction, KIERecord, PredictedEntity, PredictedExtraction
from rpa_sim.records.signal_names import check_signal_names

__all__ = ["FORMAT", "LINES_SUFFIXES", "Mapping", "TruthMapping", "load_mapping", "import_mapping"]

FORMAT = "mapping"
#: A source file whose name ends so is JSON Lines (one JSON value a line); any other is one JSON value.
LINES_SUFFIXES = (".jsonl", ".jsonl.gz")
_FILE_SUFFIXES = (".json", *LINES_SUFFIXES)
# what the report counts, by side (predicted: True): a value the path finds nothing for is lost; a null value, a
# record without fields and a JSON value without records are what the output holds
_NO_VALUE = {True: "predicted fields without a value (the value path matches nothing)",
             False: "ground-truth fields without a value (the value path matches nothing)"}
_NULL_VALUE = {True: "predicted fields with a null value", False: "ground-truth fields with a null value"}
_NO_FIELDS = {True: "records without predicted fields (the fields path matches nothing): no prediction entity",
              False: "records without ground-truth fields (the ground_truth.fields path matches nothing)"}
_NO_RECORDS = "source values in which the records path finds nothing"
_NOT_LOST = (*_NULL_VALUE.values(), *_NO_FIELDS.values(), _NO_RECORDS)


def _path(text: str) -> str:
    parse_path(text)  # a malformed path is the setting's error, with its place in the YAML file
    return text


def _record_path(text: str) -> str:
    if _path(text)[0] != "$":
        raise ValueError(f"{text!r} starts with @ (a field), but this path is read from the record: start it with $")
    return text


PathText = Annotated[str, AfterValidator(_path)]
RecordPathText = Annotated[str, AfterValidator(_record_path)]


class TruthMapping(StrictModel):
    """Where a record's ground truth is: its fields, and each field's key and value (as for the prediction)."""

    fields: RecordPathText
    key: PathText | None = None
    value: PathText = "@"


class SignalPath(StrictModel):
    """Where a field's named signal is, and the scale its numbers are on (``path`` alone: scale 1)."""

    path: PathText
    scale: float = Field(default=1.0, gt=0, allow_inf_nan=False)

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, value: Any) -> Any:
        return {"path": value} if isinstance(value, str) else value


def _signal_names(signals: dict[str, SignalPath]) -> dict[str, SignalPath]:
    check_signal_names(signals)
    return signals


class Mapping(StrictModel):
    """The mapping file: where the records, their ids, fields and ground truth are (``docs/importers/mapping.md``).

    Paths named ``records``, ``id`` and ``fields`` start at the record (``$``;
    ``records`` at the whole JSON value of a file or a line); the others may
    start at the field (``@``) or at the record (``$``).
    """

    records: RecordPathText = "$"
    id: RecordPathText
    fields: RecordPathText
    key: PathText | None = None
    value: PathText = "@"
    confidence: PathText | None = None
    confidence_scale: float = Field(default=1.0, gt=0, allow_inf_nan=False)
    signals: Annotated[dict[str, SignalPath], AfterValidator(_signal_names)] = {}
    box: PathText | None = None
    box_format: Literal["xyxy", "xywh"] = "xyxy"
    page: PathText | None = None
    first_page: Literal[0, 1] = 0
    ground_truth: TruthMapping | None = None
    log: LogMapping | None = None

    @model_validator(mode="after")
    def _fields_have_keys(self) -> Mapping:
        for where, settings in (("", self), ("ground_truth.", self.ground_truth)):
            if settings is not None and settings.key is None and not parse_path(settings.fields).has_wildcard:
                raise ValueError(f"{where}fields {settings.fields!r} binds no key (no * over an object's keys): "
                                 f"give {where}key, a path to each field's name (such as '@.name')")
        return self


def load_mapping(path: str | Path) -> Mapping:
    """The mapping file, validated; a bad setting is an :class:`InputError` naming the file, line and setting."""
    path = Path(path)
    return validated(Mapping, read_yaml(path), source=str(path))


def _sources(source: Path) -> list[Path]:
    if source.is_dir():
        files = sorted(p for p in source.iterdir() if p.is_file() and p.name.endswith(_FILE_SUFFIXES))
        if not files:
            raise InputError("no .json, .jsonl or .jsonl.gz files", path=str(source))
        return files
    if not source.exists():
        raise InputError("no such file or folder", path=str(source))
    check_input(source)
    return [source]


def _values(path: Path) -> Iterator[tuple[int | None, Any]]:
    """Each JSON value of a source file, with its line (a ``.json`` file is one, without a line): the value, or
    the :class:`InputError` that says why it cannot be read (a file that cannot be read at all raises)."""
    if path.name.endswith(LINES_SUFFIXES):
        for number, raw in input_lines(path):
            try:
                yield number, parse_line(raw, path=path, line=number)
            except InputError as error:
                yield number, error
        return
    try:
        yield None, load_json(path)
    except InputError as error:
        yield None, error


@dataclass(frozen=True)
class _Unit:
    """What the import reads one at a time: a record the ``records`` path found in a JSON value of a file, or why
    that value cannot be read."""

    path: Path
    line: int | None
    match: Match | None = None
    error: InputError | None = None

    def __str__(self) -> str:
        return str(self.path)


def import_mapping(source: str | Path, *, mapping: str | Path, ground_truth: str | Path | None = None,
                   fields: str | Path | None = None, skip_invalid: bool = False, join_lines: bool = False,
                   review_log: str | Path | None = None) -> tuple[Iterator[KIERecord], ImportReport]:
    """Read any JSON or JSON Lines output into KIE records, as a mapping file says.

    Parameters
    ----------
    source : path-like
        A ``.json`` file (one JSON value), a ``.jsonl`` or ``.jsonl.gz`` file
        (a JSON value a line), or a folder of them (in name order, not recursing).
    mapping : path-like
        The mapping file (YAML, :class:`Mapping`).
    ground_truth : path-like, optional
        A ground truth joined by id (:func:`~rpa_sim.records.importers.service.read_ground_truth`);
        not together with the mapping's ``ground_truth`` section.
    fields : path-like, optional
        A map of predicted keys to ground-truth keys
        (:class:`~rpa_sim.records.importers.service.FieldMap`).
    skip_invalid : bool, default=False
        Leave out (and list) a record, or a JSON value, with a problem rather
        than stop (:func:`~rpa_sim.records.importers.sources.each_source`); a
        path that matches nothing in the first record stops the import even so.
    join_lines : bool, default=False
        Write each line break of a value as a space, in the prediction, the
        ``ground_truth`` section's values and the log's
        (:func:`~rpa_sim.records.importers.sources.each_source`).
    review_log : path-like, optional
        Where to write the production log the mapping's ``log:`` section reads
        (:mod:`~rpa_sim.records.importers.mapping_log`), once every record is read.

    Returns
    -------
    records : iterator of KIERecord
        One per record found, lazily, in file and record order.
    report : ImportReport
        Complete once the records are consumed.

    Raises
    ------
    InputError
        At the call for a bad mapping file, source or ground truth; while
        iterating for a path that matches nothing in the first record, an id
        that is missing, repeated or not a string or integer, a value that is
        an object or a list, a confidence outside [0, 1], a bad box or page,
        a record whose fields hold values none of which the value path finds,
        naming the file, the line, the id and the place in the JSON.
    UsageError
        At the call, for a ground truth both in the mapping and ``ground_truth``, or a ``review_log``
        without a ``log:`` section.

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "out.jsonl").write_text(json.dumps(
    ...     {"doc_id": "r-1", "fields": {"total": {"value": "12.00", "score": 0.93}}}) + "\\n")
    >>> _ = (folder / "map.yaml").write_text("id: $.doc_id\\nfields: $.fields.*\\nvalue: '@.value'\\n"
    ...                                      "confidence: '@.score'\\n")
    >>> records, report = import_mapping(folder / "out.jsonl", mapping=folder / "map.yaml")
    >>> [(r.id, e.key, e.value, e.confidence) for r in records for e in r.prediction.entities]
    [('r-1', 'total', '12.00', 0.93)]
    """
    settings = load_mapping(mapping)
    files = _sources(Path(source))
    if ground_truth is not None and settings.ground_truth is not None:
        raise UsageError(f"--ground-truth {ground_truth} and the ground_truth section of {mapping} both give a "
                         f"ground truth: keep one")
    if review_log is not None and settings.log is None:
        raise UsageError(f"--review-log {review_log}: the mapping {mapping} has no log: section that says where "
                         f"each field's route and check are (docs/importers/mapping.md)")
    log_path = None if review_log is None else check_output(review_log)
    report = ImportReport(FORMAT)
    if settings.ground_truth is None:
        truth, field_map = read_joins(ground_truth=ground_truth, fields=fields, report=report)
    else:
        truth, field_map = None, FieldMap() if fields is None else FieldMap.load(fields)
    importer = _Importer(settings, str(mapping), report, field_map, log_path, join_lines=join_lines)
    records = each_source(importer.units(files), importer.read, report=report, skip_invalid=skip_invalid,
                          join_lines=join_lines, not_lost=_NOT_LOST, truth_lost=_is_truth_reason)
    return joined_records(importer.written(records), ground_truth=truth, fields=field_map, report=report), report


def _is_truth_reason(reason: str) -> bool:
    return reason.startswith("ground-truth ")


class _Place:
    """Where a record is: file, line and id, for errors."""

    def __init__(self, path: Path, line: int | None) -> None:
        self.path, self.line = str(path), line
        self.record_id: str | None = None

    def error(self, where: str | None, problem: str) -> InputError:
        return InputError(problem, path=self.path, line=self.line, record_id=self.record_id, field=where)

    def stop(self, problem: str) -> StopImport:
        """A problem of the mapping, not of this record: --skip-invalid does not skip it."""
        return StopImport(problem, path=self.path, line=self.line, record_id=self.record_id)


class _Importer:
    """The records of every source value, read with the mapping's paths."""

    def __init__(self, settings: Mapping, mapping_path: str, report: ImportReport, field_map: FieldMap,
                 log_path: Path | None = None, *, join_lines: bool = False) -> None:
        self.settings, self.mapping_path, self.report = settings, mapping_path, report
        self.field_map = field_map
        self.log_path = log_path
        self.log = None if log_path is None or settings.log is None else LogRows(settings.log, join_lines=join_lines)
        # the log rows of each record read, kept once the record is written (a record skipped logs nothing)
        self.pending_rows: dict[str, list[dict[str, Any]]] = {}
        self.first = True
        self.seen: dict[str, str] = {}
        # the settings read per field that matched something in the first record
        self.matched: set[str] = set()
        # what the per-field settings that start at the record ($) found in it, by setting: the same for every
        # field of the record, so walked once per record, not once per field (a wildcard over the fields made
        # that quadratic: 5,000 fields took 33 s)
        self.walked_record: Match | None = None
        self.walked: dict[str, list[Match]] = {}

    def units(self, files: list[Path]) -> Iterator[_Unit]:
        """Each record the ``records`` path finds in the sources' JSON values, in order, or a value's problem."""
        records_path = parse_path(self.settings.records)
        for path in files:
            for line, value in _values(path):
                if isinstance(value, InputError):
                    yield _Unit(path, line, error=value)
                    continue
                found = records_path.matches(value)
                if not found:
                    if self.first:
                        raise self._nothing(_Place(path, line), "records", records_path, value)
                    self.report.unmapped[_NO_RECORDS] += 1
                for match in found:
                    yield _Unit(path, line, match)
        if self.first and not self.report.skipped:
            raise InputError("no records: the source holds no JSON value, or none in which the records path "
                             "finds a record", path=str(files[0]) if len(files) == 1 else str(files[0].parent))

    def read(self, unit: _Unit) -> Iterator[KIERecord]:
        """The record of one unit; an :class:`InputError` for a value or record that does not fit."""
        if unit.error is not None:
            raise unit.error
        assert unit.match is not None, "a unit without an error holds its record"
        place = _Place(unit.path, unit.line)
        rows = [] if self.log is None else self.log.rows
        logged = len(rows)
        try:
            record = self.record(unit.match, place)
            if record.id in self.seen:
                raise place.error(unit.match.where, f"a second record with this id (the first: "
                                                    f"{self.seen[record.id]})")
            self.pending_rows[record.id] = rows[logged:]
        finally:
            del rows[logged:]
        self.seen[record.id] = f"{place.path}, " + (f"line {unit.line}" if unit.line is not None
                                                    else unit.match.where)
        yield record

    def written(self, records: Iterator[KIERecord]) -> Iterator[KIERecord]:
        """``records`` as they are written: their log rows kept, their fields counted; the notes and the log when
        they end."""
        counts: Counter[str] = Counter()
        for record in records:
            if self.log is not None:
                self.log.rows += self.pending_rows.pop(record.id)
            entities = record.prediction.entities if record.prediction is not None else []
            counts["confidence"] += sum(entity.confidence is not None for entity in entities)
            counts["no_confidence"] += sum(entity.confidence is None for entity in entities)
            counts["box"] += sum(entity.evidence is not None for entity in entities)
            counts["no_box"] += sum(entity.evidence is None for entity in entities)
            for name in self.settings.signals:
                found = sum(entity.signals is not None and entity.signals.get(name) is not None for entity in entities)
                counts[f"signals.{name}"] += found
                counts[f"no signals.{name}"] += len(entities) - found
            yield record
        self._notes(counts)
        if self.log is not None and self.log_path is not None:
            written = self.log.write(self.log_path)
            self.report.notes.append(f"review log {self.log_path}: {written:,} rows, one per imported predicted "
                                     f"field")

    # ------------------------------------------------------------------ one record

    def record(self, match: Match, place: _Place) -> KIERecord:
        place.record_id = None  # not known until the id is read
        if self.first:  # a first record skipped by --skip-invalid leaves nothing to the next one's check
            self.matched = set()
        record_id = place.record_id = self._id(match, place)
        prediction = self._side(match, place, self.settings, predicted=True)
        ground_truth = None
        if self.settings.ground_truth is not None:
            ground_truth = self._side(match, place, self.settings.ground_truth, predicted=False)
        if self.first:
            self._check_first(match, place)
            self.first = False
        return KIERecord(id=record_id, prediction=prediction, ground_truth=ground_truth)

    def _id(self, record: Match, place: _Place) -> str:
        path = parse_path(self.settings.id)
        found = path.matches(record.value, record.where)
        if not found:
            if self.first:
                raise self._nothing(place, "id", path, record.value, record.where)
            raise place.error(record.where, f"no id: {self.settings.id} matches nothing")
        value = self._one(found, place, "id").value
        if isinstance(value, bool) or not isinstance(value, (str, int)):
            raise place.error(found[0].where, f"expected an id (a string or an integer), got {shown(value)}")
        if isinstance(value, str) and not value.strip():
            raise place.error(found[0].where, "an empty id")
        return str(value)

    def _side(self, record: Match, place: _Place, settings: Mapping | TruthMapping,
              *, predicted: bool) -> PredictedExtraction | Extraction:
        side = "" if predicted else "ground_truth."
        fields_path = parse_path(settings.fields)
        found = fields_path.matches(record.value, record.where)
        if not found:
            if self.first:
                raise self._nothing(place, f"{side}fields", fields_path, record.value, record.where)
            self.report.unmapped[_NO_FIELDS[predicted]] += 1
        entities = []
        for field in found:
            entity = self._entity(record, field, place, settings, side=side, predicted=predicted)
            if entity is not None:
                entities.append(entity)
        return PredictedExtraction(entities=entities) if predicted else Extraction(entities=entities)

    def _read(self, name: str, settings: Mapping | TruthMapping, record: Match, field: Match, *,
              text: str | None = None) -> list[Match]:
        """What the setting ``name`` (its path ``text``, else the setting's own) finds in the field or record."""
        path = parse_path(text if text is not None else getattr(settings, name.rsplit(".", 1)[-1]))
        if path.root == "@":
            found = path.matches(field.value, field.where)
        else:
            if self.walked_record is not record:
                self.walked_record, self.walked = record, {}
            if name not in self.walked:
                self.walked[name] = path.matches(record.value, record.where)
            found = self.walked[name]
        if found:
            self.matched.add(name)
        return found

    def _entity(self, record: Match, field: Match, place: _Place, settings: Mapping | TruthMapping, *, side: str,
                predicted: bool) -> Entity | PredictedEntity | None:
        key = self._key(record, field, place, settings, side)
        found = self._read(f"{side}value", settings, record, field)
        value_match = self._one(found, place, f"{side}value") if found else None
        if value_match is None or value_match.value is None:  # counted once, whatever --fields says of the key
            self.report.unmapped[_NO_VALUE[predicted] if value_match is None else _NULL_VALUE[predicted]] += 1
            if predicted:
                self.field_map.seen(key)
            return None
        if predicted:
            renamed = self.field_map.key(key)
            if renamed is None:  # dropped by --fields: not read further
                return None
            key = renamed
        text = self._text(value_match.value, value_match.where, place, setting=f"{side}value", path=settings.value)
        if not predicted:
            return Entity(key=key, value=text)
        entity = PredictedEntity(key=key, value=text, confidence=self._confidence(record, field, place),
                                 evidence=self._evidence(record, field, place),
                                 signals=self._signals(record, field, place))
        if self.log is not None:  # the value as --join-lines writes it, which the checked value is compared with
            logged = join_lines(text) if self.log.join_lines else text
            self.log.add(record, field, {"id": place.record_id, "key": key, "value": logged,
                                         "confidence": entity.confidence}, place.error)
        return entity

    def _key(self, record: Match, field: Match, place: _Place, settings: Mapping | TruthMapping, side: str) -> str:
        if settings.key is None:
            if not field.keys:
                raise place.error(field.where, f"{side}fields {settings.fields!r} found a list item, which no "
                                               f"object key names: give {side}key, a path to its name (such as "
                                               f"'@.name')")
            return ".".join(field.keys)
        found = self._read(f"{side}key", settings, record, field)
        if not found:
            raise place.error(field.where, f"no key: {side}key {settings.key!r} matches nothing in this field")
        key_match = self._one(found, place, f"{side}key")
        if key_match.value is None:
            raise place.error(key_match.where, f"{side}key {settings.key!r} found null, expected a key (a string "
                                               f"or number)")
        return self._text(key_match.value, key_match.where, place, setting=f"{side}key", path=settings.key)

    def _confidence(self, record: Match, field: Match, place: _Place) -> float | None:
        if self.settings.confidence is None:
            return None
        found = self._read("confidence", self.settings, record, field)
        raw = self._one(found, place, "confidence").value if found else None
        if raw is None:
            return None
        where = found[0].where
        number = _number(raw)
        if number is None:
            raise place.error(where, f"expected a confidence (a number), got {shown(raw)}")
        confidence = number / self.settings.confidence_scale
        if not 0.0 <= confidence <= 1.0:
            scale = self.settings.confidence_scale
            shown_scale = "" if scale == 1 else f" / confidence_scale {scale:g} = {confidence:g}"
            # the hint only where it fixes the value
            hint = " (set confidence_scale: 100 for percentages)" if scale != 100 and 0 <= number <= 100 else ""
            raise place.error(where, f"{shown(raw)}{shown_scale} is not in [0, 1]{hint}")
        return confidence

    def _signals(self, record: Match, field: Match, place: _Place) -> dict[str, float | None] | None:
        """The field's named signals: each a number in [0, 1] (after its scale), None where it has none."""
        if not self.settings.signals:
            return None
        found_signals: dict[str, float | None] = {}
        for name, spec in self.settings.signals.items():
            setting = f"signals.{name}"
            found = self._read(setting, self.settings, record, field, text=spec.path)
            raw = self._one(found, place, setting).value if found else None
            if raw is None:
                found_signals[name] = None
                continue
            number = _number(raw)
            if number is None:
                raise place.error(found[0].where, f"expected signal {name!r} (a number), got {shown(raw)}")
            value = number / spec.scale
            if not 0.0 <= value <= 1.0:
                scaled = "" if spec.scale == 1 else f" / scale {spec.scale:g} = {value:g}"
                raise place.error(found[0].where, f"{shown(raw)}{scaled} is not in [0, 1] (signal {name!r}; "
                                                  f"give it a scale: {{path: ..., scale: 100}} for percentages)")
            found_signals[name] = value
        return found_signals

    def _evidence(self, record: Match, field: Match, place: _Place) -> list[Evidence] | None:
        if self.settings.box is None:
            return None
        found = self._read("box", self.settings, record, field)
        if not found or found[0].value is None:
            return None
        box_match = self._one(found, place, "box")
        raw = box_match.value
        numbers = [_number(v, strings=False) for v in raw] if isinstance(raw, list) else []
        known = [number for number in numbers if number is not None]
        if len(numbers) != 4 or len(known) != 4:
            raise place.error(box_match.where, f"expected a box, four numbers ({self.settings.box_format}), "
                                               f"got {shown(raw)}")
        x0, y0, a, b = known
        box = (x0, y0, x0 + a, y0 + b) if self.settings.box_format == "xywh" else (x0, y0, a, b)
        if not all(math.isfinite(coordinate) for coordinate in box):
            raise place.error(box_match.where, f"{shown(raw)} ({self.settings.box_format}): coordinates too large: "
                                               f"the box is beyond any page")
        if box[2] < box[0] or box[3] < box[1]:
            raise place.error(box_match.where, f"{shown(raw)} is not a box ({self.settings.box_format}): it ends "
                                               f"before it starts")
        return [Evidence(page=self._page(record, field, place), bbox=box)]

    def _page(self, record: Match, field: Match, place: _Place) -> int:
        first = self.settings.first_page
        if self.settings.page is None:
            return 0
        found = self._read("page", self.settings, record, field)
        if not found or found[0].value is None:
            return 0
        page_match = self._one(found, place, "page")
        page = page_match.value
        if isinstance(page, bool) or not isinstance(page, int) or page < first:
            raise place.error(page_match.where, f"expected a page number from {first} (first_page), got "
                                                f"{shown(page)}")
        return page - first

    # ------------------------------------------------------------------ checks and messages

    def _one(self, found: list[Match], place: _Place, setting: str) -> Match:
        if len(found) > 1:
            raise place.error(found[1].where, f"{setting}: the path matches {len(found)} values ({found[0].where}, "
                                              f"{found[1].where}, ...), expected one")
        return found[0]

    def _text(self, value: Any, where: str, place: _Place, *, setting: str, path: str) -> str:
        if isinstance(value, (dict, list)):
            raise place.error(where, f"{setting} {path!r} found {shown(value)}, expected a value (a string, number "
                                     f"or boolean)" + ("; point it inside the field, such as '@.value'"
                                                       if path == "@" else ""))
        try:
            return value_text(value)
        except ValueError as error:
            raise place.error(where, str(error)) from None

    def _check_first(self, record: Match, place: _Place) -> None:
        settings = self.settings
        per_field = {"key": settings.key, "value": settings.value, "confidence": settings.confidence,
                     "box": settings.box, "page": settings.page,
                     **{f"signals.{name}": spec.path for name, spec in settings.signals.items()}}
        if settings.ground_truth is not None:
            per_field |= {"ground_truth.key": settings.ground_truth.key,
                          "ground_truth.value": settings.ground_truth.value}
        for name, text in per_field.items():
            if text is not None and name not in self.matched:
                path = parse_path(text)
                truth = settings.ground_truth
                fields = truth.fields if truth is not None and name.startswith("ground_truth.") else settings.fields
                node = parse_path(fields).matches(record.value)[0].value if path.root == "@" else record.value
                raise self._nothing(place, name, path, node, record.where)

    def _nothing(self, place: _Place, setting: str, path: JsonPath, node: Any, record_where: str = "$") -> StopImport:
        """The error for a path that matches nothing in the first record: how far it gets, and the mapping's line."""
        reached, found = path.reach(node)
        if reached == path.root:
            seen = "the first field" if path.root == "@" else "the record"
        else:
            seen = f"{reached} (in the first field)" if path.root == "@" else reached
        line = field_line(self.mapping_path, setting.split("."))
        in_mapping = self.mapping_path + ("" if line is None else f", line {line}")
        at = "" if record_where == "$" else f" (at {record_where})"
        return place.stop(f"{setting} {path.text!r} matches nothing in the first record{at}: {seen} is "
                          f"{_shape(found[0].value)}; fix it in {in_mapping}")

    def _notes(self, counts: Counter[str]) -> None:
        notes = [
            ("predicted fields with a confidence", counts["confidence"]),
            ("predicted fields without a confidence: null (a policy must set missing_confidence)",
             counts["no_confidence"]),
            *((f"predicted fields with the signal {name}", counts[f"signals.{name}"])
              for name in self.settings.signals),
            *((f"predicted fields without the signal {name} (missing)", counts[f"no signals.{name}"])
              for name in self.settings.signals),
            ("predicted fields with a box as evidence", counts["box"]),
            ("predicted fields without a box", counts["no_box"] if self.settings.box is not None else 0),
        ]
        self.report.notes += [f"{what}: {count:,}" for what, count in notes if count]


def _number(value: Any, *, strings: bool = True) -> float | None:
    """A finite number, or (with ``strings``) a string that reads as one; None otherwise."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str) and strings:
        try:
            value = float(value)
        except ValueError:
            return None
    return float(value) if is_finite_number(value) else None


def _shape(value: Any) -> str:
    """What a value is, in a few words, for the message of a path that goes no further."""
    if isinstance(value, dict):
        names = ", ".join(shown(key) for key in list(value)[:6])
        return f"an object with the keys {names}" + (", ..." if len(value) > 6 else "") if value else "an empty object"
    if isinstance(value, list):
        return f"a list of {len(value)}"
    return f"the value {shown(value)}"
