"""What the importers of service outputs share: a ground truth to join, a map of field names, values as text.

A document-AI service (Azure Document Intelligence, Google Document AI,
Mindee, a labelling tool's export) writes predictions only, under its own
field names. Two options of their importers bring the other side in at
import time (``docs/importers/service.md``):

- ``--ground-truth FILE`` (:func:`read_ground_truth`): with it the importer
  writes full records (ground truth + prediction); without it, predictions
  only.
- ``--fields FILE`` (:class:`FieldMap`): service field names -> the
  ground truth's keys. A name the map does not hold keeps the service's name
  and is counted in the :class:`~rpa_sim.records.importers.ImportReport`; a name
  mapped to ``null`` is dropped, and counted too.

Values are written as text by :func:`value_text`, the same way on both sides,
so that a ground-truth number ``14.5`` and a service's typed ``14.5`` compare
equal.

:func:`~rpa_sim.records.importers.sources.each_source` reads the files of a
``SRC`` by the rules every importer of outputs shares (``--skip-invalid``,
``--join-lines``, no empty record for values that could not be mapped).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from rpa_sim.common.errors import InputError, shown
from rpa_sim.common.formatting import counted
from rpa_sim.common.inputs import check_input
from rpa_sim.common.yamlfile import field_line, read_yaml
from rpa_sim.records.importers import ImportReport
from rpa_sim.records.importers._json import FieldChecks, load_json, read_record_side
from rpa_sim.records.models import Box, Entity, Extraction, Group, KIERecord

__all__ = ["ABSENT_KEY", "FIELDS_KEY", "RECORDS_SUFFIXES", "FieldMap", "GroundTruth", "bounding_box", "joined_records",
           "read_ground_truth", "read_joins", "source_files", "value_text"]

#: In the simple JSON form, the key that holds one document's fields (the shared ``ground_truth.json`` files).
FIELDS_KEY = "fields"
#: In the simple JSON form, the optional list of fields that the document does not hold.
ABSENT_KEY = "absent"
#: A ground-truth file whose name ends so is canonical records (JSON Lines); any other is the simple JSON form.
RECORDS_SUFFIXES = (".jsonl", ".jsonl.gz")
# the unmapped names a report line shows; the rest are counted
_NAMES_SHOWN = 5
# the YAML map's values are quoted as YAML's flow style quotes them
_YAML_QUOTE = "'"


def value_text(value: str | float) -> str:
    """A scalar JSON value as the text a record holds: strings as they are, numbers as short as they read.

    An integral number is written without a decimal part (``2140.0`` -> ``2140``), any other as Python's
    shortest round-trip text, so that a ground truth and a service that both give the number agree.

    Examples
    --------
    >>> value_text("NO. 001"), value_text(14.5), value_text(2140.0), value_text(463), value_text(True)
    ('NO. 001', '14.5', '2140', '463', 'true')
    >>> value_text(float("nan"))
    Traceback (most recent call last):
    ...
    ValueError: nan is not a finite number
    """
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if not math.isfinite(value):
        raise ValueError(f"{value!r} is not a finite number")
    return str(int(value)) if value.is_integer() and abs(value) < 2**53 else repr(value)


def source_files(source: str | Path, *, what: str) -> list[Path]:
    """The JSON files of an importer's ``SRC``: the file itself, or a folder's ``*.json`` files by name.

    Parameters
    ----------
    source : path-like
        A file, or a folder (not searched recursively).
    what : str
        What the files hold, for the message about an empty folder (``"Mindee responses"``).

    Raises
    ------
    InputError
        For a missing source or a folder without ``.json`` files.
    """
    source = Path(source)
    if source.is_dir():
        files = sorted(p for p in source.glob("*.json") if p.is_file())
        if not files:
            raise InputError(f"no .json files (expected {what})", path=str(source))
        return files
    if not source.exists():
        raise InputError("no such file or folder", path=str(source))
    check_input(source)
    return [source]


def bounding_box(points: Iterable[tuple[float, float]]) -> Box:
    """The axis-aligned box ``[x0, y0, x1, y1]`` around a polygon's points, in the points' own units.

    Examples
    --------
    >>> bounding_box([(380.9, 282.9), (1116, 473.2), (1025, 824.4), (290, 634)])
    (290, 282.9, 1116, 824.4)
    """
    xs, ys = zip(*points)
    return min(xs), min(ys), max(xs), max(ys)


def read_joins(*, ground_truth: str | Path | None, fields: str | Path | None,
               report: ImportReport) -> tuple[GroundTruth | None, FieldMap]:
    """The ``--ground-truth`` and ``--fields`` of a service importer, read (and checked) before any record.

    Without a ground truth the report notes that the records are predictions only, and how to join one.
    """
    field_map = FieldMap() if fields is None else FieldMap.load(fields)
    if ground_truth is None:
        report.notes.append("predictions only: give --ground-truth FILE to write full records, or join canonical "
                            "ground truth with `rpa-sim score GT.jsonl --predictions IMPORTED.jsonl`")
        return None, field_map
    return read_ground_truth(ground_truth, report=report), field_map


def joined_records(records: Iterable[KIERecord], *, ground_truth: GroundTruth | None, fields: FieldMap,
                   report: ImportReport) -> Iterator[KIERecord]:
    """``records`` joined to their ground truth and counted in ``report``; the joins' counts when they end."""
    for record in records:
        report.records += 1
        yield record if ground_truth is None else ground_truth.join(record)
    if ground_truth is not None:
        ground_truth.finish(report)
    fields.finish(report)


# --------------------------------------------------------------------------- ground truth


class GroundTruth:
    """The ground-truth side of the documents an importer produces, joined to each by its id.

    Made by :func:`read_ground_truth`. :meth:`join` fills a record's
    ``ground_truth``; :meth:`finish` reports what was left on either side.

    Attributes
    ----------
    path : str
        The file read.
    documents : dict of str to Extraction
        The ground truth by document id; empty for the one-document form.
    single : Extraction or None
        The one-document form's ground truth (a file without ids), which goes to
        the one document imported.
    """

    def __init__(self, path: str, documents: dict[str, Extraction], single: Extraction | None) -> None:
        self.path, self.documents, self.single = path, documents, single
        self._joined: list[str] = []
        self._without: int = 0

    def join(self, record: KIERecord) -> KIERecord:
        """``record`` with its ground truth; without one it stays prediction-only, and is counted.

        Raises
        ------
        InputError
            For a second document when the file is the one-document form (it
            cannot say which document it describes).
        """
        if self.single is not None:
            if self._joined:
                raise InputError(f"the ground truth of one document (no ids) cannot be joined to a second one "
                                 f"({shown(self._joined[0])}, then {shown(record.id)}): write it as "
                                 f"{{document id: {{field: value}}}}", path=self.path)
            self._joined.append(record.id)
            return record.model_copy(update={"ground_truth": self.single})
        truth = self.documents.get(record.id)
        if truth is None:
            self._without += 1
            return record
        self._joined.append(record.id)
        return record.model_copy(update={"ground_truth": truth})

    def finish(self, report: ImportReport) -> None:
        """Count in ``report`` the documents left without ground truth and the ground truths left unused."""
        report.notes.append(f"ground truth joined from {self.path}: {counted(len(self._joined), 'document')}")
        if self._without:
            report.unmapped["documents without ground truth in --ground-truth (written with predictions "
                            "only: score refuses them unless --skip-invalid)"] += self._without
        unused = len(self.documents.keys() - set(self._joined))
        if unused:
            report.unmapped["ground-truth documents with no imported document of that id"] += unused


def read_ground_truth(path: str | Path, *, report: ImportReport) -> GroundTruth:
    """Read a ground truth to join to imported predictions.

    Two forms, told by the file's name:

    - canonical records (a name ending in ``.jsonl`` or ``.jsonl.gz``): each
      line a record with ``id`` and ``ground_truth``; a ``prediction`` is
      ignored.
    - the simple JSON form, any other name: one document's
      ``{"fields": {field: value}, "line_items": [{field: value}, ...]}`` (the
      shared ``ground_truth.json`` files; other top-level lists of objects are
      groups too, top-level strings such as ``source`` are comments, and
      ``absent`` lists fields the document does not hold), or
      ``{document id: {field: value}}`` for several documents, where each
      document is either that one-document form or a flat mapping (top-level
      strings, such as ``source``, are comments here too).

    In a field mapping a value is a string, a number (:func:`value_text`), a
    boolean, ``null`` (left out: the field is absent, counted in the report), a
    list of such values (one entity each), or a list of objects: one group
    each, named after the key (``line_items``), whose entities are read the same
    way, without nested groups.

    Parameters
    ----------
    path : path-like
        The ground-truth file.
    report : ImportReport
        Receives the counts of null values.

    Returns
    -------
    GroundTruth

    Raises
    ------
    InputError
        For a missing or unreadable file, and for any value that is not of the
        forms above, naming the field path.

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "gt.json"
    >>> _ = path.write_text(json.dumps({"fields": {"Total": 14.5, "Tip": None},
    ...                                 "line_items": [{"Name": "Latte", "Price": "4.00"}]}))
    >>> report = ImportReport("example")
    >>> truth = read_ground_truth(path, report=report)
    >>> truth.single.entities, [(g.name, len(g.entities)) for g in truth.single.groups]
    ([Entity(key='Total', value='14.5')], [('line_items', 2)])
    >>> dict(report.unmapped)
    {'ground-truth fields with a null value (left out)': 1}
    """
    path = Path(path)
    if not path.exists():
        raise InputError("no such file", path=str(path))
    check_input(path)
    if path.name.endswith(RECORDS_SUFFIXES):
        truths = read_record_side(path, "ground_truth", Extraction)
        if not truths:
            raise InputError("no records", path=str(path))
        return GroundTruth(str(path), truths, None)
    return _SimpleForm(str(path), report).read(load_json(path))


class _SimpleForm(FieldChecks):
    """The simple JSON form, read with checks that name the field path of any problem."""

    def __init__(self, path: str, report: ImportReport) -> None:
        self.path, self.report = path, report

    def error(self, field: str, problem: str) -> InputError:
        return InputError(problem, path=self.path, field=field or None)

    def read(self, data: Any) -> GroundTruth:
        top = self.as_object(data, "")
        if isinstance(top.get(FIELDS_KEY), dict):
            return GroundTruth(self.path, {}, self.document(top, ""))
        documents = {}
        for document_id, document in top.items():
            if isinstance(document, str):  # a comment (a source note), as in the one-document form
                continue
            where = _step("", document_id)
            if not isinstance(document, dict):
                raise self.error(where, f"expected a document's fields (an object), got {shown(document)}; one "
                                        f"document's ground truth is written {{\"fields\": {{field: value}}}}")
            is_wrapped = isinstance(document.get(FIELDS_KEY), dict)
            documents[document_id] = self.document(document, where) if is_wrapped else self.fields(document, where)
        if not documents:
            raise self.error("", "no documents: expected {\"fields\": {...}} or {document id: {field: value}}")
        return GroundTruth(self.path, documents, None)

    def document(self, document: dict[str, Any], where: str) -> Extraction:
        """The one-document form: ``fields``, ``absent``, lists of objects as groups, strings as comments."""
        truth = self.fields(document[FIELDS_KEY], _step(where, FIELDS_KEY))
        groups = list(truth.groups)
        for key, value in document.items():
            if key == FIELDS_KEY or isinstance(value, str):
                continue
            if key == ABSENT_KEY:
                self.check_absent(value, _step(where, key), document[FIELDS_KEY])
            elif isinstance(value, list) and all(isinstance(item, dict) for item in value):
                groups += self.groups(key, value, _step(where, key))
            else:
                raise self.error(_step(where, key), f"expected a list of objects (groups) or a comment (a string), "
                                                    f"got {shown(value)}")
        return Extraction(entities=truth.entities, groups=groups)

    def check_absent(self, value: Any, where: str, fields: dict[str, Any]) -> None:
        for index, name in enumerate(self.as_list(value, where)):
            name = self.as_text(name, f"{where}[{index}]")
            if fields.get(name) is not None:
                raise self.error(f"{where}[{index}]", f"{shown(name)} is listed as absent but has a value in "
                                                      f"{FIELDS_KEY}")

    def fields(self, mapping: dict[str, Any], where: str) -> Extraction:
        entities: list[Entity] = []
        groups: list[Group] = []
        for key, value in mapping.items():
            if isinstance(value, list) and value and all(isinstance(item, dict) for item in value):
                groups += self.groups(key, value, _step(where, key))
            else:
                entities += self.entities(key, value, _step(where, key))
        return Extraction(entities=entities, groups=groups)

    def groups(self, name: str, items: list[dict[str, Any]], where: str) -> list[Group]:
        groups = []
        for index, item in enumerate(items):
            entities = []
            for key, value in item.items():
                entities += self.entities(key, value, f"{_step(f'{where}[{index}]', key)}")
            groups.append(Group(name=name, entities=entities))
        return groups

    def entities(self, key: str, value: Any, where: str) -> list[Entity]:
        if value is None:
            self.report.unmapped["ground-truth fields with a null value (left out)"] += 1
            return []
        values = value if isinstance(value, list) else [value]
        entities = []
        for index, item in enumerate(values):
            field = f"{where}[{index}]" if isinstance(value, list) else where
            if isinstance(item, (dict, list)):
                raise self.error(field, f"expected a value (a string, number or boolean), got {shown(item)}: "
                                        f"groups are lists of objects, and are not nested")
            if item is None or not isinstance(item, (str, bool, int, float)):
                raise self.error(field, f"expected a value (a string, number or boolean), got {shown(item)}")
            if isinstance(item, float):
                self.as_number(item, field)
            entities.append(Entity(key=key, value=value_text(item)))
        return entities


def _step(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


# --------------------------------------------------------------------------- field names


class FieldMap:
    """Service field names -> ground-truth keys, from ``--fields FILE``; without a file, names as they are.

    The YAML file is one mapping ``service name: ground-truth key``; a key of
    ``null`` drops the field. Which service names an importer looks up is in
    its documentation (a group's fields: ``Items.Name`` for Azure,
    ``line_item/description`` for Google, as the services write them).

    Attributes
    ----------
    path : str or None
        The map file; ``None`` for no map.
    names : dict of str to str or None
        The mapping.

    Examples
    --------
    >>> fields = FieldMap({"Total": "total", "Items": None}, path="map.yaml")
    >>> fields.key("Total"), fields.key("Items"), fields.key("Tip"), fields.key("Items.Name", default="Name")
    ('total', None, 'Tip', 'Name')
    >>> report = ImportReport("example")
    >>> fields.finish(report)
    >>> print("\\n".join(report.lines()))  # doctest: +NORMALIZE_WHITESPACE
    not mapped: 1 fields or groups dropped by --fields map.yaml (mapped to null): Items
    not mapped: 2 fields or groups that --fields map.yaml does not name, kept under the service's name:
    Items.Name, Tip
    """

    def __init__(self, names: Mapping[str, str | None] | None = None, *, path: str | None = None) -> None:
        self.path = path
        self.names = dict(names or {})
        self._unnamed: Counter[str] = Counter()
        self._unnamed_groups: set[str] = set()
        self._dropped: Counter[str] = Counter()
        self._used: set[str] = set()

    @classmethod
    def load(cls, path: str | Path) -> FieldMap:
        """The map in a YAML file; anything but a mapping of names to names or null is an :class:`InputError`."""
        data = read_yaml(Path(path))
        if not isinstance(data, dict) or not data:
            raise InputError(f"expected a mapping of service field names to ground-truth keys (name: key, or "
                             f"name: null to drop it), got {shown(data, quote=_YAML_QUOTE)}", path=str(path))
        for name, key in data.items():
            if not isinstance(name, str) or not (key is None or isinstance(key, str)):
                raise InputError(f"expected a service field name mapped to a ground-truth key or null, got "
                                 f"{shown({name: key}, quote=_YAML_QUOTE)}", path=str(path),
                                 line=field_line(str(path), [str(name)]))
        return cls(data, path=str(path))

    def key(self, name: str, *, default: str | None = None) -> str | None:
        """The key of the service field ``name``: as mapped (``None``: drop it), else ``default`` or ``name``.

        With a map, a name it does not hold is counted, and a dropped one too.
        """
        if self.path is None:
            return name if default is None else default
        if name in self.names:
            self._used.add(name)
            key = self.names[name]
            if key is None:
                self._dropped[name] += 1
            return key
        self._unnamed[name] += 1
        return name if default is None else default

    def group_key(self, name: str, *, values: int) -> str | None:
        """The name of a group (a service's list item or object): as :meth:`key`, counted in values.

        Dropping the group drops its ``values`` (its fields with a value), which are counted; a group kept
        under the service's name counts none, since its fields are looked up, and counted, one by one.
        """
        if self.path is None:
            return name
        if name in self.names:
            self._used.add(name)
            key = self.names[name]
            if key is None:
                self._dropped[name] += values
            return key
        self._unnamed_groups.add(name)
        return name

    def seen(self, name: str) -> None:
        """A field ``name`` that the service left without a value: nothing written, nothing counted here (the
        importer counts it as without a value), but a name the map has for it is in use."""
        if name in self.names:
            self._used.add(name)

    def finish(self, report: ImportReport) -> None:
        """Count in ``report`` the fields dropped, the fields the map does not name, the names it has in vain."""
        if self.path is None:
            return
        if self._dropped:
            report.unmapped[f"fields or groups dropped by --fields {self.path} (mapped to null): "
                            f"{_some(self._dropped)}"] += self._dropped.total()
        if self._unnamed:
            report.unmapped[f"fields or groups that --fields {self.path} does not name, kept under the service's "
                            f"name: {_some(self._unnamed)}"] += self._unnamed.total()
        if self._unnamed_groups:
            report.notes.append(f"groups that --fields {self.path} does not name, kept under the service's name: "
                                f"{_some(Counter(self._unnamed_groups))}")
        unused = sorted(self.names.keys() - self._used)
        if unused:
            report.notes.append(f"names in --fields {self.path} that no imported field has ({len(unused)}): "
                                f"{_some(Counter(unused))}")


def _some(names: Counter[str]) -> str:
    """The names in order, the first few shown and the rest counted."""
    ordered = sorted(names)
    shown_names = ", ".join(ordered[:_NAMES_SHOWN])
    return shown_names if len(ordered) <= _NAMES_SHOWN else f"{shown_names} and {len(ordered) - _NAMES_SHOWN} more"
