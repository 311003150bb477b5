"""Import Mindee API responses (v1 predictions, v2 inferences) as KIE predictions.

Two generations of the API answer with different JSON (``docs/importers/mindee.md``):

- v1 (``/v1/products/mindee/<product>/<version>/predict``): the prediction is
  in ``document.inference.prediction``. A field is ``{value, confidence,
  polygon, page_id}`` (``polygon``: ``[[x, y], ...]`` as fractions of the page,
  ``page_id`` from 0); a field Mindee did not find has ``value: null``. A list
  field is a list: of such fields (``reference_numbers``: several values), or
  of objects with one confidence for the whole item (``line_items``:
  ``{description, quantity, unit_price, total_amount, confidence, polygon,
  page_id}``; ``taxes``: ``{value, rate, code, base, ...}``).
- v2 (``/v2/inferences``): the fields are in ``inference.result.fields``. A
  simple field is ``{value, confidence, locations}`` with ``confidence`` a level
  (``Certain``, ``High``, ``Medium``, ``Low``, or null when not asked for) and
  ``locations`` ``[{polygon, page}]``; a list field is ``{items: [...]}``, an
  object field ``{fields: {...}}``, each of their fields with its own level.

Mapping (one KIE record per response):

- id: the file's stem.
- a field with a value -> an entity keyed by its name (through ``--fields``);
  several values (v1: a list of items whose only datum is ``value``, as
  ``reference_numbers``; v2: ``items`` of simple fields) -> one entity each,
  same key; a list of objects (v1 items with other data, as ``line_items``,
  ``taxes``; v2 ``items`` of object fields) -> one group per
  object, named after the list, its fields keyed by their names (``--fields``
  looks them up as ``line_items.description``); a v2 object field -> one
  group. A v1 field's parts beside its ``value`` (a ``locale``'s ``currency``,
  an address's parts) and lists or objects inside a group are not mapped, and
  are counted; so are fields without a value.
- value: ``value`` as text (:func:`~rpa_sim.records.importers.service.value_text`:
  ``2140.0`` -> ``2140``), as Mindee normalises it (dates ISO, amounts numbers).
- confidence: v1 ``confidence`` (an item's confidence for each of its
  fields); v2 the level through :data:`CONFIDENCE_LEVELS`; missing (null) when
  the response has none.
- evidence: each polygon (v1 ``polygon`` on ``page_id``, v2 each location),
  as its box on a virtual 1000 x 1000 px page: Mindee gives fractions of the
  page and no page size.
- document: none (the responses read here carry no OCR words).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rpa_sim.common.errors import InputError
from rpa_sim.records.importers import ImportReport
from rpa_sim.records.importers._json import FieldChecks, load_json, show
from rpa_sim.records.importers.service import (
    FieldMap,
    bounding_box,
    joined_records,
    read_joins,
    source_files,
    value_text,
)
from rpa_sim.records.importers.sources import each_source
from rpa_sim.records.importers.textract import PAGE_SIZE
from rpa_sim.records.models import (
    Box,
    Evidence,
    KIERecord,
    PredictedEntity,
    PredictedExtraction,
    PredictedGroup,
)

__all__ = ["CONFIDENCE_LEVELS", "FORMAT", "import_mindee"]

FORMAT = "mindee"
#: The score of each of Mindee v2's confidence levels: ordered, with room between them for thresholds
#: (docs/importers/mindee.md says why these numbers).
CONFIDENCE_LEVELS = {"Certain": 1.0, "High": 0.9, "Medium": 0.6, "Low": 0.3}
# what a v1 field or list item holds beside its data
_V1_METADATA = frozenset({"confidence", "polygon", "page_id", "bounding_box", "raw_value"})
_BOX_DECIMALS = 2
# what the report counts
_NOT_FOUND = "fields without a value (not found)"
_EMPTY_MEMBER = "fields of list items and objects without a value"
_NESTED = "lists and objects inside a group (canonical groups do not nest)"
_BOX_WITHOUT_PAGE = ("v1 boxes without a page_id on a document of several pages, or of no stated page count (box "
                     "left out, value kept)")
# what a response gave no value for ("not found"), or what follows from it: what the service found, not values lost;
# a box left out keeps its value
_NOT_LOST = (_NOT_FOUND, _EMPTY_MEMBER, "list items or objects with no field left (no group written)",
             _BOX_WITHOUT_PAGE)


def import_mindee(source: str | Path, *, ground_truth: str | Path | None = None, fields: str | Path | None = None,
                  skip_invalid: bool = False, join_lines: bool = False) -> tuple[Iterator[KIERecord], ImportReport]:
    """Read Mindee v1 or v2 API responses into KIE records.

    Parameters
    ----------
    source : path-like
        A response file (``.json``) or a folder of them (its ``*.json`` files,
        by name, not recursing); v1 and v2 responses may be mixed.
    ground_truth : path-like, optional
        A ground truth to join by id (:func:`~rpa_sim.records.importers.service.read_ground_truth`).
    fields : path-like, optional
        A YAML map of field names to ground-truth keys (:class:`~rpa_sim.records.importers.service.FieldMap`).
    skip_invalid : bool, default=False
        Leave out (and count) a response with a problem rather than stop
        (:func:`~rpa_sim.records.importers.sources.each_source`).
    join_lines : bool, default=False
        Write each line break of a value as a space.

    Returns
    -------
    records : iterator of KIERecord
        One per response, lazily, files in name order.
    report : ImportReport
        Complete once the records are consumed.

    Raises
    ------
    InputError
        At the call for a missing source, an empty folder or a bad ground truth
        or map; while iterating for a file that is not a Mindee response, a
        confidence outside [0, 1] or a level not Mindee's, a malformed polygon...,
        naming the file and the field path.

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> response = {"inference": {"result": {"fields": {
    ...     "total_amount": {"value": 2140.0, "confidence": "High", "locations": []},
    ...     "due_date": {"value": None, "confidence": None, "locations": []}}}}}
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "invoice.json"
    >>> _ = path.write_text(json.dumps(response))
    >>> records, report = import_mindee(path)
    >>> [(r.id, e.key, e.value, e.confidence) for r in records for e in r.prediction.entities]
    [('invoice', 'total_amount', '2140', 0.9)]
    >>> report.unmapped["fields without a value (not found)"]
    1
    """
    files = source_files(source, what="Mindee API responses")
    report = ImportReport(FORMAT)
    truth, field_map = read_joins(ground_truth=ground_truth, fields=fields, report=report)
    return joined_records(_records(files, field_map, report, skip_invalid=skip_invalid, join_lines=join_lines),
                          ground_truth=truth, fields=field_map, report=report), report


def _records(files: list[Path], fields: FieldMap, report: ImportReport, *, skip_invalid: bool,
             join_lines: bool) -> Iterator[KIERecord]:
    stats: Counter[str] = Counter()

    def read(path: Path) -> Iterator[KIERecord]:  # a file's counts join the others' once it is read whole
        file_stats: Counter[str] = Counter()
        yield _Response(str(path), fields, report.unmapped, file_stats).record(path.stem, load_json(path))
        stats.update(file_stats)

    yield from each_source(files, read, report=report, skip_invalid=skip_invalid, join_lines=join_lines,
                           not_lost=_NOT_LOST)
    for version in ("v1", "v2"):
        if stats[version]:
            report.notes.append(f"{version} responses: {stats[version]}")
    if stats["v2"]:
        levels = ", ".join(f"{level} {score:g}" for level, score in CONFIDENCE_LEVELS.items())
        report.notes.append(f"v2 confidence levels read as scores ({levels}): a threshold acts on levels")
    if stats["no_confidence"]:
        report.notes.append("fields without a confidence, written with a missing confidence (null; set "
                            f"missing_confidence in the policy): {stats['no_confidence']}")
    if stats["page_of_one"]:
        report.notes.append(f"v1 boxes without a page_id, placed on the one page of their document: "
                            f"{stats['page_of_one']}")
    if stats["evidence"]:
        report.notes.append(f"evidence boxes on a virtual {PAGE_SIZE:g} x {PAGE_SIZE:g} px page (Mindee gives "
                            f"fractions of the page and no page size): {stats['evidence']}")


class _Response(FieldChecks):
    """One parsed response, read with checks that name the file and the field path of any problem."""

    def __init__(self, path: str, fields: FieldMap, unmapped: Counter[str], stats: Counter[str]) -> None:
        self.path, self.fields, self.unmapped, self.stats = path, fields, unmapped, stats
        #: the v1 document's page count (None: not stated), which places a box that has no page_id
        self.pages: int | None = None

    def error(self, field: str, problem: str) -> InputError:
        return InputError(problem, path=self.path, field=field or None)

    def record(self, stem: str, data: Any) -> KIERecord:
        top = self.as_object(data, "")
        entities: list[PredictedEntity] = []
        groups: list[PredictedGroup] = []
        if "document" in top:
            self.stats["v1"] += 1
            where = "document.inference.prediction"
            document = self.as_object(top["document"], "document")
            inference = self.as_object(self.required(document, "inference", "document"), "document.inference")
            prediction = self.as_object(self.required(inference, "prediction", "document.inference"), where)
            self.pages = self.page_count(document, inference)
            for name, raw in prediction.items():
                self.v1_field(name, raw, f"{where}.{name}", entities, groups)
        elif "inference" in top:
            self.stats["v2"] += 1
            where = "inference.result.fields"
            inference = self.as_object(top["inference"], "inference")
            result = self.as_object(self.required(inference, "result", "inference"), "inference.result")
            for name, raw in self.as_object(result.get("fields") or {}, where).items():
                self.v2_field(name, raw, f"{where}.{name}", entities, groups)
        else:
            raise self.error("", f"not a Mindee response: no document (v1) or inference (v2); keys: {sorted(top)}")
        return KIERecord(id=stem, prediction=PredictedExtraction(entities=entities, groups=groups))

    # ------------------------------------------------------------------- v1

    def page_count(self, document: dict[str, Any], inference: dict[str, Any]) -> int | None:
        """The pages of a v1 document: ``n_pages``, else its ``inference.pages``; None when neither says."""
        count = document.get("n_pages")
        if count is not None:
            if isinstance(count, bool) or not isinstance(count, int) or count < 1:
                raise self.error("document.n_pages", f"expected a page count from 1, got {show(count)}")
            return count
        pages = inference.get("pages")
        return len(pages) if isinstance(pages, list) and pages else None

    def v1_field(self, name: str, raw: Any, where: str, entities: list[PredictedEntity],
                 groups: list[PredictedGroup]) -> None:
        if isinstance(raw, list):
            for index, item in enumerate(raw):
                item_where = f"{where}[{index}]"
                item = self.as_object(item, item_where)
                if item.keys() - _V1_METADATA == {"value"}:  # one of several values (reference_numbers)
                    self.add(entities, self.v1_entity(name, item, item_where))
                else:
                    self.add(groups, self.v1_group(name, item, item_where))
        else:
            self.add(entities, self.v1_entity(name, self.as_object(raw, where), where))

    def v1_entity(self, name: str, field: dict[str, Any], where: str) -> PredictedEntity | None:
        value = field.get("value")
        if value is None:
            self.absent(name, in_group=False)
            return None
        key = self.fields.key(name)
        if key is None:  # dropped by --fields: not read further, so nothing in it can stop the import
            return None
        if field.keys() - _V1_METADATA - {"value"}:
            self.unmapped["parts of v1 fields beside their value (a locale's currency, an address's parts)"] += 1
        return self.entity(key, value, where, self.number_confidence(field, where), self.v1_evidence(field, where))

    def v1_group(self, name: str, item: dict[str, Any], where: str) -> PredictedGroup | None:
        present = []
        for member, value in item.items():
            if member in _V1_METADATA:
                continue
            if isinstance(value, (dict, list)):
                self.unmapped[_NESTED] += 1
            elif value is None:
                self.absent(f"{name}.{member}", in_group=True)
            else:
                present.append((member, value))
        group_name = self.fields.group_key(name, values=len(present))
        if group_name is None:
            return None
        confidence, evidence = self.number_confidence(item, where), self.v1_evidence(item, where)
        entities = []
        for member, value in present:
            key = self.fields.key(f"{name}.{member}", default=member)
            if key is not None:
                entities.append(self.entity(key, value, f"{where}.{member}", confidence, evidence))
        return self.group(group_name, entities)

    def number_confidence(self, field: dict[str, Any], where: str) -> float | None:
        if field.get("confidence") is None:
            return None
        confidence = self.as_number(field["confidence"], f"{where}.confidence")
        if not 0.0 <= confidence <= 1.0:
            raise self.error(f"{where}.confidence", f"{show(field['confidence'])} is not in [0, 1]")
        return confidence

    def v1_evidence(self, field: dict[str, Any], where: str) -> list[Evidence]:
        polygon = field.get("polygon") or []
        if not polygon:
            return []
        box = self.box(polygon, f"{where}.polygon")
        page = field.get("page_id")
        if page is None:  # Mindee leaves it out of some fields (financial_document's addresses, registrations)
            if self.pages != 1:
                self.unmapped[_BOX_WITHOUT_PAGE] += 1
                return []
            self.stats["page_of_one"] += 1
            page = 0
        return [Evidence(page=self.page(page, f"{where}.page_id"), bbox=box)]

    # ------------------------------------------------------------------- v2

    def v2_field(self, name: str, raw: Any, where: str, entities: list[PredictedEntity],
                 groups: list[PredictedGroup]) -> None:
        field = self.as_object(raw, where)
        if "items" in field:
            for index, item in enumerate(self.as_list(field["items"], f"{where}.items")):
                item_where = f"{where}.items[{index}]"
                item = self.as_object(item, item_where)
                if "fields" in item:
                    self.add(groups, self.v2_group(name, item["fields"], f"{item_where}.fields"))
                elif "items" in item:
                    self.unmapped["lists directly inside lists (canonical records have no place for them)"] += 1
                else:
                    self.add(entities, self.v2_entity(name, name, item, item_where))
        elif "fields" in field:
            self.add(groups, self.v2_group(name, field["fields"], f"{where}.fields"))
        else:
            self.add(entities, self.v2_entity(name, name, field, where))

    def v2_value(self, field: dict[str, Any], where: str) -> Any:
        if "value" not in field:
            raise self.error(where, f"expected a field with a value, items or fields; keys: {sorted(field)}")
        return field["value"]

    def v2_entity(self, name: str, default: str, field: dict[str, Any], where: str, *,
                  in_group: bool = False) -> PredictedEntity | None:
        value = self.v2_value(field, where)
        if value is None:
            self.absent(name, in_group=in_group)
            return None
        key = self.fields.key(name, default=default)
        if key is None:  # dropped by --fields: not read further
            return None
        return self.entity(key, value, where, self.level(field, where), self.v2_evidence(field, where))

    def v2_group(self, name: str, raw: Any, where: str) -> PredictedGroup | None:
        # the group's fields, each read once: (the name --fields looks up, the default key, the field, its path)
        leaves = []
        for member, raw_field in self.as_object(raw, where).items():
            member_where = f"{where}.{member}"
            field = self.as_object(raw_field, member_where)
            if "fields" in field:
                self.unmapped[_NESTED] += 1
            elif "items" in field:
                items = self.as_list(field["items"], f"{member_where}.items")
                if any(isinstance(item, dict) and ("fields" in item or "items" in item) for item in items):
                    self.unmapped[_NESTED] += 1
                    continue
                for index, item in enumerate(items):
                    item_where = f"{member_where}.items[{index}]"
                    leaves.append((f"{name}.{member}", member, self.as_object(item, item_where), item_where))
            else:
                leaves.append((f"{name}.{member}", member, field, member_where))
        present = []
        for leaf in leaves:
            if self.v2_value(leaf[2], leaf[3]) is None:
                self.absent(leaf[0], in_group=True)
            else:
                present.append(leaf)
        group_name = self.fields.group_key(name, values=len(present))
        if group_name is None:
            return None
        entities = [self.v2_entity(lookup, default, field, leaf_where, in_group=True)
                    for lookup, default, field, leaf_where in present]
        return self.group(group_name, [entity for entity in entities if entity is not None])

    def level(self, field: dict[str, Any], where: str) -> float | None:
        level = field.get("confidence")
        if level is None:
            return None
        if not isinstance(level, str) or level not in CONFIDENCE_LEVELS:
            raise self.error(f"{where}.confidence", f"{show(level)} is not one of Mindee's levels "
                                                    f"{', '.join(CONFIDENCE_LEVELS)}")
        return CONFIDENCE_LEVELS[level]

    def v2_evidence(self, field: dict[str, Any], where: str) -> list[Evidence]:
        evidence = []
        for index, raw in enumerate(self.as_list(field.get("locations") or [], f"{where}.locations")):
            location_where = f"{where}.locations[{index}]"
            location = self.as_object(raw, location_where)
            if not location.get("polygon"):
                continue
            page = self.page(location.get("page"), f"{location_where}.page")
            evidence.append(Evidence(page=page, bbox=self.box(location["polygon"], f"{location_where}.polygon")))
        return evidence

    # ------------------------------------------------------------------- both

    def absent(self, name: str, *, in_group: bool) -> None:
        """A field without a value: counted once, whatever --fields says of it (there is nothing to write)."""
        self.fields.seen(name)
        self.unmapped[_EMPTY_MEMBER if in_group else _NOT_FOUND] += 1

    def entity(self, key: str, value: Any, where: str, confidence: float | None,
               evidence: list[Evidence]) -> PredictedEntity:
        if isinstance(value, (dict, list)):
            raise self.error(f"{where}.value", f"expected a string, number or boolean, got {show(value)}")
        if isinstance(value, float):
            self.as_number(value, f"{where}.value")
        if confidence is None:
            self.stats["no_confidence"] += 1
        self.stats["evidence"] += len(evidence)
        return PredictedEntity(key=key, value=value_text(value), confidence=confidence, evidence=evidence or None)

    def group(self, name: str, entities: list[PredictedEntity]) -> PredictedGroup | None:
        if not entities:
            self.unmapped["list items or objects with no field left (no group written)"] += 1
            return None
        return PredictedGroup(name=name, entities=entities)

    @staticmethod
    def add(items: list[Any], item: Any) -> None:
        if item is not None:
            items.append(item)

    def page(self, value: Any, where: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise self.error(where, f"expected a page index from 0, got {show(value)}")
        return value

    def box(self, raw: Any, where: str) -> Box:
        """A polygon of ``[x, y]`` fractions of the page, as its box on the virtual page."""
        points = []
        for index, point in enumerate(self.as_list(raw, where)):
            pair = self.as_list(point, f"{where}[{index}]")
            if len(pair) != 2:
                raise self.error(f"{where}[{index}]", f"expected a point [x, y], got {show(pair)}")
            x, y = (self.as_number(v, f"{where}[{index}][{axis}]") for axis, v in enumerate(pair))
            points.append((x, y))
        if not points:
            raise self.error(where, "empty: a polygon needs points")
        x0, y0, x1, y1 = bounding_box(points)
        box = (round(x0 * PAGE_SIZE, _BOX_DECIMALS), round(y0 * PAGE_SIZE, _BOX_DECIMALS),
               round(x1 * PAGE_SIZE, _BOX_DECIMALS), round(y1 * PAGE_SIZE, _BOX_DECIMALS))
        if not all(math.isfinite(v) for v in box):
            raise self.error(where, "coordinates too large: the box is beyond any page")
        return box
