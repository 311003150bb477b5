"""Import Azure Document Intelligence (Form Recognizer) ``analyzeResult`` outputs as KIE predictions.

An analyze operation's response (``GET .../analyzeResults/{id}``) holds an
``analyzeResult``; a file may be the whole response or the ``analyzeResult``
alone. Two shapes exist, told apart by their keys:

- v2.1 (Form Recognizer): ``documentResults[].fields``; a field has
  ``type``, a typed value (``valueString``, ``valueNumber``, ``valueDate``...),
  the recognised ``text``, ``boundingBox`` (8 numbers: the corners of a
  quadrilateral), ``page`` (from 1) and ``confidence``. Pages and their OCR
  words are in ``readResults[]`` (``lines[].words[]``).
- v3 and later (Document Intelligence): ``documents[].fields``; a field has
  the recognised ``content``, the typed value (``valueCurrency`` is
  ``{amount, currencySymbol, currencyCode}``, ``valueAddress`` an object...),
  ``boundingRegions[]`` (``pageNumber`` from 1 and a ``polygon`` of numbers)
  and ``confidence``. Pages and their words are in ``pages[]``.

Mapping (one KIE record per analysed document; ``docs/importers/azure-di.md``):

- id: ``<file stem>-<n>``, ``n`` the document's 1-based position in
  ``documentResults``/``documents``; ``document_type``: its ``docType``.
- a field -> an entity keyed by its name (through ``--fields``); a field of
  type array of objects (``Items``: ``valueArray`` of ``valueObject``) -> one
  group per object, named after the array, its fields keyed by their own names
  (``--fields`` looks them up as ``Items.Name``); an array of values -> one
  entity per value; an object field -> one group. Arrays and objects inside a
  group are not mapped (canonical groups do not nest), and are counted.
- value (``value="text"``, the default): the recognised text (``content``,
  ``text``), which is what the page shows, so what ANLS and grounding compare
  with a reading of the page; the typed value when the field has no text (a
  ``ReceiptType`` is a classification). ``value="typed"``: the typed value
  (:func:`typed_value`), the text when there is none. Both fallbacks counted.
- confidence: the field's ``confidence``; a field without one gets a missing
  confidence (null), never the 1.0 that the SDKs' models default to.
- signals: ``ocr``, the lowest ``confidence`` of the OCR words the field's
  text spans (v3: the words whose ``span`` overlaps the field's ``spans``;
  v2.1: the words its ``elements`` name), when the response gives them
  (:mod:`~rpa_sim.records.importers.word_confidence`); the service gives no
  other score per field.
- evidence: each box of the field (v2.1 ``boundingBox`` on ``page``, v3 each
  bounding region), as the axis-aligned box around the polygon, in the page's
  own unit (pixel for images, inch for PDFs), page index = page number - 1.
- document: the OCR words of ``readResults``/``pages`` when the response has
  any, on pages of the size and unit it gives; otherwise none, so that
  grounding stays unknown rather than measured against no words.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from rpa_sim.common import limits
from rpa_sim.common.errors import InputError, shown
from rpa_sim.records.importers import ImportReport
from rpa_sim.records.importers._json import FieldChecks, JSONParts, LazyList, load_json_parts, show
from rpa_sim.records.importers.service import (
    FieldMap,
    bounding_box,
    joined_records,
    read_joins,
    source_files,
    value_text,
)
from rpa_sim.records.importers.sources import each_source
from rpa_sim.records.importers.word_confidence import OCR_SIGNAL, WordConfidences
from rpa_sim.records.models import (
    Box,
    Document,
    Evidence,
    KIERecord,
    Page,
    PredictedEntity,
    PredictedExtraction,
    PredictedGroup,
    Word,
)

__all__ = ["FORMAT", "KNOWN_VERSIONS", "VALUE_CHOICES", "import_azure_di", "typed_value"]

FORMAT = "azure-di"
VALUE_CHOICES = ("text", "typed")
ValueChoice = Literal["text", "typed"]
#: The API versions whose results this importer reads: Form Recognizer 2.0 and 2.1 (``documentResults``;
#: the result's ``version``), and the ``apiVersion`` of every later one (``documents``), previews included.
KNOWN_VERSIONS = ("2.0.0", "2.1.0", "2021-09-30-preview", "2022-01-30-preview", "2022-06-30-preview", "2022-08-31",
                  "2023-02-28-preview", "2023-07-31", "2023-10-31-preview", "2024-02-29-preview",
                  "2024-07-31-preview", "2024-11-30")
# the beginnings of the problems that say a shape was not recognised (a value out of range is another matter)
_SHAPE_PROBLEMS = ("missing", "expected an object", "expected a list", "expected a string", "not an analyze result",
                   "expected x, y pairs")

# The typed value of each kind of field, in the order they are looked for; both API generations' names.
_SCALAR_VALUES = ("valueString", "valueNumber", "valueInteger", "valueDate", "valueTime", "valuePhoneNumber",
                  "valueCountryRegion", "valueCountry", "valueSelectionMark", "valueSignature", "valueBoolean")
_CURRENCY, _ARRAY, _OBJECT = "valueCurrency", "valueArray", "valueObject"
# the fields every word sets (model_construct's _fields_set, shared: a frozen model never changes it)
_WORD_FIELDS = {"text", "bbox"}
# a field the service lists without a value: what it found, not a value lost (a custom model lists every field)
_NO_VALUE = "fields without a value (neither text nor typed value)"
_NO_FIELD_LEFT = "groups with no field left (no group written)"


def typed_value(field: dict[str, Any]) -> str | bool | float | None:
    """A field's typed value as a scalar, or ``None`` when it has none that is one.

    A currency is its ``amount`` (the symbol and code are dropped: a ground
    truth writes totals as numbers); an address (an object of parts) has none,
    nor do arrays and objects.

    Examples
    --------
    >>> typed_value({"type": "number", "valueNumber": 463, "text": "$463"})
    463
    >>> typed_value({"type": "currency", "valueCurrency": {"amount": 14.5, "currencySymbol": "$"}})
    14.5
    >>> typed_value({"type": "address", "valueAddress": {"road": "Main Street"}}) is None
    True
    """
    for key in _SCALAR_VALUES:
        if key in field:
            return field[key]
    currency = field.get(_CURRENCY)
    if isinstance(currency, dict):
        return currency.get("amount")
    return None


def import_azure_di(source: str | Path, *, value: ValueChoice = "text", ground_truth: str | Path | None = None,
                    fields: str | Path | None = None, skip_invalid: bool = False,
                    join_lines: bool = False) -> tuple[Iterator[KIERecord], ImportReport]:
    """Read Azure Document Intelligence / Form Recognizer analyze results into KIE records.

    Parameters
    ----------
    source : path-like
        A response or ``analyzeResult`` file (``.json``), or a folder of them
        (its ``*.json`` files, by name, not recursing).
    value : {"text", "typed"}, default="text"
        Which string is the value: the recognised text, or the typed value.
    ground_truth : path-like, optional
        A ground truth to join by id (:func:`~rpa_sim.records.importers.service.read_ground_truth`);
        without it the records are predictions only.
    fields : path-like, optional
        A YAML map of field names to ground-truth keys (:class:`~rpa_sim.records.importers.service.FieldMap`).
    skip_invalid : bool, default=False
        Leave out (and count) a file or document with a problem rather than
        stop (:func:`~rpa_sim.records.importers.sources.each_source`).
    join_lines : bool, default=False
        Write each line break of a value (a two-line address) as a space.

    Returns
    -------
    records : iterator of KIERecord
        One per analysed document, lazily, files in name order.
    report : ImportReport
        Complete once the records are consumed.

    Raises
    ------
    InputError
        At the call for a missing source, an empty folder or a bad ground truth
        or map; while iterating for a file that is not an analyze result (no
        ``documentResults`` or ``documents``, a confidence outside [0, 1], a
        polygon of an odd count of numbers...), with the file and field path,
        and for a shape not recognised, the file's ``apiVersion`` and
        :data:`KNOWN_VERSIONS`; before it is read, for a file too large for
        the memory available (an import takes about
        :data:`~rpa_sim.common.limits.AZURE_IMPORT_BYTES_PER_BYTE` times its size).

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> result = {"analyzeResult": {"documents": [{"docType": "receipt", "fields": {
    ...     "Total": {"type": "currency", "valueCurrency": {"amount": 14.5}, "content": "$14.50",
    ...               "boundingRegions": [{"pageNumber": 1, "polygon": [1, 2, 9, 2, 9, 4, 1, 4]}]},
    ...     "Tip": {"type": "currency", "valueCurrency": {"amount": 1.63}, "content": "1.63", "confidence": 0.9}}}]}}
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "receipt.json"
    >>> _ = path.write_text(json.dumps(result))
    >>> records, report = import_azure_di(path)
    >>> [(e.key, e.value, e.confidence, e.evidence) for r in records for e in r.prediction.entities]
    ... # doctest: +NORMALIZE_WHITESPACE
    [('Total', '$14.50', None, [Evidence(page=0, bbox=(1.0, 2.0, 9.0, 4.0))]),
     ('Tip', '1.63', 0.9, None)]
    """
    if value not in VALUE_CHOICES:
        raise ValueError(f"value must be one of {VALUE_CHOICES}, got {value!r}")
    files = source_files(source, what="Azure Document Intelligence analyze results")
    report = ImportReport(FORMAT)
    truth, field_map = read_joins(ground_truth=ground_truth, fields=fields, report=report)
    report.notes.append("value = the recognised text (content, text): what the page shows" if value == "text" else
                        "value = the typed value (valueString, valueNumber..., a currency's amount)")
    options = _Options(value, field_map)
    stats: Counter[str] = Counter()
    records = each_source(files, lambda path: _file_records(path, options, report.unmapped, stats), report=report,
                          skip_invalid=skip_invalid, join_lines=join_lines,
                          not_lost=(_NO_VALUE, _NO_FIELD_LEFT))
    return joined_records(_noted(records, stats, options, report), ground_truth=truth, fields=field_map,
                          report=report), report


@dataclass(frozen=True)
class _Options:
    value: ValueChoice
    fields: FieldMap


def _file_records(path: Path, options: _Options, unmapped: Counter[str], totals: Counter[str]) -> Iterator[KIERecord]:
    """The records of one file; its counts join ``totals`` only once it is read whole."""
    _check_memory(path)
    stats: Counter[str] = Counter()
    yield from _Result(str(path), path.stem, options, unmapped, stats).records(load_json_parts(path))
    totals.update(stats)


def _check_memory(path: Path) -> None:
    """Refuse, before reading it, a file that would take more memory than this machine has available."""
    size = path.stat().st_size
    try:
        limits.require_memory(size * limits.AZURE_IMPORT_BYTES_PER_BYTE, what=f"its {limits.size_text(size)}")
    except limits.SizeError as error:
        raise InputError(f"too large to import here: {error}", path=str(path)) from None


def _noted(records: Iterator[KIERecord], stats: Counter[str], options: _Options,
           report: ImportReport) -> Iterator[KIERecord]:
    yield from records
    for shape in ("v2.1", "v3 or later"):
        if stats[shape]:
            report.notes.append(f"files of the {shape} shape: {stats[shape]}")
    if stats["preview boxes"]:
        report.notes.append(f"files of a 2021 or 2022 preview, whose boundingBox is the polygon: "
                            f"{stats['preview boxes']}")
    if stats["fallback"]:
        other = "typed value" if options.value == "text" else "recognised text"
        report.notes.append(f"fields without a {'recognised text' if options.value == 'text' else 'typed value'}, "
                            f"whose {other} is the value: {stats['fallback']}")
    if stats["no_confidence"]:
        report.notes.append("fields without a confidence, written with a missing confidence (null, not the SDKs' "
                            f"default of 1.0; set missing_confidence in the policy): {stats['no_confidence']}")
    if stats["ocr"]:
        report.notes.append(f"fields with the signal ocr, the lowest confidence of the OCR words of their text: "
                            f"{stats['ocr']}")
    if stats["currency"] and options.value == "typed":
        report.notes.append(f"currency values written as their amount (symbol and code dropped): {stats['currency']}")
    units = sorted(unit for unit in ("pixel", "inch") if stats[f"unit {unit}"])
    if units:
        report.notes.append(f"evidence boxes and pages in the pages' own unit: {', '.join(units)}")
    if stats["with_words"]:
        report.notes.append(f"documents with the OCR words of the response's pages: {stats['with_words']}")
    if stats["without_words"]:
        report.notes.append("documents without OCR words in the response (no readResults lines or pages words): "
                            f"grounding stays unknown: {stats['without_words']}")


class _Result(FieldChecks):
    """One parsed file, read with checks that name the field path of any problem."""

    def __init__(self, path: str, stem: str, options: _Options, unmapped: Counter[str], stats: Counter[str]) -> None:
        self.path, self.stem, self.options = path, stem, options
        self.unmapped, self.stats = unmapped, stats
        self.fields = options.fields
        self.page_count: int | None = None
        #: the result's apiVersion (v2.1: its version), for messages about a shape not recognised
        self.version: str | None = None
        #: whether v3 boxes are boundingBox (the 2021 and 2022 previews), not polygon
        self.preview = False
        #: the OCR words' confidences: by text span (v3), by reference ``#/readResults/0/lines/1/words/2`` (v2.1)
        self.word_spans = WordConfidences()
        self.word_references: dict[str, float] = {}

    def error(self, field: str, problem: str) -> InputError:
        if problem.startswith(_SHAPE_PROBLEMS):
            problem += f" ({self.version_note()})"
        return InputError(problem, path=self.path, field=field or None)

    def version_note(self) -> str:
        """What a message about a shape not recognised adds: the file's API version and those read."""
        read = f"the versions read are {', '.join(KNOWN_VERSIONS[:2])} and {KNOWN_VERSIONS[2]} to {KNOWN_VERSIONS[-1]}"
        if self.version is None:
            return f"the file gives no apiVersion; {read}"
        if self.version in KNOWN_VERSIONS:
            return f"apiVersion {shown(self.version)}, a version read, but not in its shape; {read}"
        return f"apiVersion {shown(self.version)}; {read}"

    def records(self, data: Any) -> Iterator[KIERecord]:
        if not isinstance(data, JSONParts):
            self.as_object(data, "")  # a JSON value that is not an object
        top, where = data, ""
        if "analyzeResult" in top:
            status = top.value("status", "succeeded")
            if status != "succeeded":
                raise self.error("status", f"{show(status)}: the analysis did not succeed, so it has no result")
            where = "analyzeResult"
            top = top.object("analyzeResult")
            if not isinstance(top, JSONParts):
                self.as_object(top, where)
        version = top.value("apiVersion", top.value("version"))
        self.version = version if isinstance(version, str) else None
        if "documentResults" in top:
            self.stats["v2.1"] += 1
            documents_key, pages_key = "documentResults", "readResults"
        elif "documents" in top:
            self.stats["v3 or later"] += 1
            documents_key, pages_key = "documents", "pages"
        else:
            raise self.error(where, f"not an analyze result: no documentResults (v2.1) or documents (v3 and later); "
                                    f"keys: {sorted(top.keys())}")
        document = self.document(top.listed(pages_key, []), _step(where, pages_key))
        documents_where = _step(where, documents_key)
        documents = top.listed(documents_key)
        documents = list(documents) if isinstance(documents, LazyList) else self.as_list(documents, documents_where)
        del data, top  # the file's bytes: not held while the records are written
        for index, raw in enumerate(documents):
            document_where = f"{documents_where}[{index}]"
            yield self.record(index, self.as_object(raw, document_where), document_where, document)
        self.stats["preview boxes"] += self.preview

    def record(self, index: int, analysed: dict[str, Any], where: str, document: Document | None) -> KIERecord:
        doc_type = analysed.get("docType")
        fields = self.as_object(analysed.get("fields") or {}, f"{where}.fields")
        entities: list[PredictedEntity] = []
        groups: list[PredictedGroup] = []
        for name, raw in fields.items():
            field_where = f"{where}.fields.{name}"
            field = self.as_object(raw, field_where)
            if _ARRAY in field:
                self.array(name, field, field_where, entities, groups)
            elif _OBJECT in field:
                group = self.group(name, field[_OBJECT], f"{field_where}.{_OBJECT}")
                if group is not None:
                    groups.append(group)
            else:
                entity = self.field_entity(name, field, field_where)
                if entity is not None:
                    entities.append(entity)
        self.stats["with_words" if document is not None else "without_words"] += 1
        return KIERecord(id=f"{self.stem}-{index + 1}", document=document,
                         document_type=doc_type if isinstance(doc_type, str) and doc_type else None,
                         prediction=PredictedExtraction(entities=entities, groups=groups))

    def array(self, name: str, field: dict[str, Any], where: str, entities: list[PredictedEntity],
              groups: list[PredictedGroup]) -> None:
        items = self.as_list(field[_ARRAY], f"{where}.{_ARRAY}")
        for index, raw in enumerate(items):
            item_where = f"{where}.{_ARRAY}[{index}]"
            item = self.as_object(raw, item_where)
            if _OBJECT in item:
                group = self.group(name, item[_OBJECT], f"{item_where}.{_OBJECT}")
                if group is not None:
                    groups.append(group)
            elif _ARRAY in item:
                self.unmapped["arrays directly inside arrays (canonical records have no place for them)"] += 1
            else:
                entity = self.field_entity(name, item, item_where)
                if entity is not None:
                    entities.append(entity)

    def group(self, name: str, raw: Any, where: str) -> PredictedGroup | None:
        # the group's fields, each read once: (the name --fields looks up, the default key, the field, its path)
        leaves = []
        for member, raw_field in self.as_object(raw, where).items():
            member_where = f"{where}.{member}"
            field = self.as_object(raw_field, member_where)
            if _ARRAY in field:
                values_where = f"{member_where}.{_ARRAY}"
                items = [(f"{values_where}[{i}]", self.as_object(item, f"{values_where}[{i}]"))
                         for i, item in enumerate(self.as_list(field[_ARRAY], values_where))]
            else:
                items = [(member_where, field)]
            if any(_OBJECT in item or _ARRAY in item for _, item in items):
                self.unmapped["arrays of objects, and objects, inside a group (canonical groups do not nest)"] += 1
                continue
            leaves += [(f"{name}.{member}", member, item, item_where) for item_where, item in items]
        present = [leaf for leaf in leaves if self.present(leaf[0], leaf[2])]
        group_name = self.fields.group_key(name, values=len(present))
        if group_name is None:
            return None
        entities = [self.entity(lookup, default, field, leaf_where) for lookup, default, field, leaf_where in present]
        kept = [entity for entity in entities if entity is not None]
        if not kept:
            self.unmapped[_NO_FIELD_LEFT] += 1
            return None
        return PredictedGroup(name=group_name, entities=kept)

    def present(self, name: str, field: dict[str, Any]) -> bool:
        """Whether a field has a value (text or typed); one without is counted once, whatever --fields says."""
        if field.get("content", field.get("text")) is not None or typed_value(field) is not None:
            return True
        self.fields.seen(name)
        self.unmapped[_NO_VALUE] += 1
        return False

    def field_entity(self, name: str, field: dict[str, Any], where: str) -> PredictedEntity | None:
        """A field outside a group (or a value of an array of values) as an entity, if it has a value."""
        return self.entity(name, name, field, where) if self.present(name, field) else None

    def entity(self, name: str, default: str, field: dict[str, Any], where: str) -> PredictedEntity | None:
        """A field with a value as an entity keyed through --fields; None when the map drops it."""
        key = self.fields.key(name, default=default)
        if key is None:  # dropped by --fields: not read further
            return None
        value = self.value(field, where)
        assert value is not None, "a field present has a text or a typed value"
        ocr = self.ocr(field, where)
        self.stats["ocr"] += ocr is not None
        return PredictedEntity(key=key, value=value, confidence=self.confidence(field, where),
                               evidence=self.evidence(field, where) or None,
                               signals=None if ocr is None else {OCR_SIGNAL: ocr})

    def ocr(self, field: dict[str, Any], where: str) -> float | None:
        """The lowest confidence of the OCR words of the field's text; None when the response does not say."""
        if "spans" in field:
            spans = []
            for index, raw in enumerate(self.as_list(field["spans"], f"{where}.spans")):
                span = self.as_object(raw, f"{where}.spans[{index}]")
                offset, length = (self.as_number(self.required(span, name, f"{where}.spans[{index}]"),
                                                 f"{where}.spans[{index}].{name}") for name in ("offset", "length"))
                spans.append((int(offset), int(offset + length)))
            return self.word_spans.lowest(spans)
        found = [self.word_references[reference] for reference in field.get("elements") or ()
                 if isinstance(reference, str) and reference in self.word_references]
        return min(found) if found else None

    def value(self, field: dict[str, Any], where: str) -> str | None:
        text = field.get("content", field.get("text"))
        if text is not None:
            text = self.as_text(text, f"{where}.{'content' if 'content' in field else 'text'}")
        typed = typed_value(field)
        if typed is not None:
            if not isinstance(typed, (str, bool, int, float)):
                raise self.error(where, f"expected a typed value that is a string, number or boolean, got "
                                        f"{show(typed)}")
            if isinstance(typed, float) and not math.isfinite(typed):
                raise self.error(where, f"expected a finite number, got {show(typed)}")
            self.stats["currency"] += _CURRENCY in field
            typed = value_text(typed)
        first, second = (text, typed) if self.options.value == "text" else (typed, text)
        if first is None and second is not None:
            self.stats["fallback"] += 1
        return first if first is not None else second

    def confidence(self, field: dict[str, Any], where: str) -> float | None:
        if field.get("confidence") is None:
            self.stats["no_confidence"] += 1
            return None
        confidence = self.as_number(field["confidence"], f"{where}.confidence")
        if not 0.0 <= confidence <= 1.0:
            raise self.error(f"{where}.confidence", f"{show(field['confidence'])} is not in [0, 1]")
        return confidence

    def evidence(self, field: dict[str, Any], where: str) -> list[Evidence]:
        if "boundingBox" in field:  # v2.1: one quadrilateral on one page
            page = self.page_number(self.required(field, "page", where), f"{where}.page")
            return [Evidence(page=page - 1, bbox=self.polygon(field["boundingBox"], f"{where}.boundingBox"))]
        evidence = []
        regions = self.as_list(field.get("boundingRegions", []), f"{where}.boundingRegions")
        for index, raw in enumerate(regions):
            region_where = f"{where}.boundingRegions[{index}]"
            region = self.as_object(raw, region_where)
            page = self.page_number(self.required(region, "pageNumber", region_where), f"{region_where}.pageNumber")
            shape = "polygon" if "polygon" in region else "boundingBox"  # boundingBox: the 2021 and 2022 previews
            self.preview = self.preview or shape == "boundingBox"
            box = self.polygon(self.required(region, shape, region_where), f"{region_where}.{shape}")
            evidence.append(Evidence(page=page - 1, bbox=box))
        return evidence

    def page_number(self, value: Any, where: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise self.error(where, f"expected a page number from 1, got {show(value)}")
        if self.page_count is not None and value > self.page_count:
            raise self.error(where, f"page {value}, but the result has {self.page_count} pages")
        return value

    def polygon(self, raw: Any, where: str) -> Box:
        values = self.as_list(raw, where)
        numbers = _plain_numbers(values)
        if numbers is None:  # something other than finite numbers: the first one is named
            numbers = [self.as_number(v, f"{where}[{i}]") for i, v in enumerate(values)]
        if not numbers or len(numbers) % 2:
            raise self.error(where, f"expected x, y pairs of coordinates, got {len(numbers)} numbers")
        return bounding_box(zip(numbers[::2], numbers[1::2]))

    def document(self, raw_pages: Any, where: str) -> Document | None:
        """The pages (sizes, units and OCR words) of the result; ``None`` when they hold no word."""
        pages: dict[int, tuple[float, float, list[Word]]] = {}
        for index, raw in enumerate(raw_pages if isinstance(raw_pages, LazyList) else self.as_list(raw_pages, where)):
            page_where = f"{where}[{index}]"
            page = self.as_object(raw, page_where)
            number_key = "pageNumber" if "pageNumber" in page else "page"
            number = self.page_number(self.required(page, number_key, page_where), f"{page_where}.{number_key}")
            if number in pages:
                raise self.error(f"{page_where}.{number_key}", f"page {number} is given twice")
            unit = page.get("unit")
            if unit in ("pixel", "inch"):
                self.stats[f"unit {unit}"] += 1
            width, height = (self.as_number(self.required(page, side, page_where), f"{page_where}.{side}")
                             for side in ("width", "height"))
            pages[number] = (width, height, self.words(page, page_where))
        if sorted(pages) != list(range(1, len(pages) + 1)):
            raise self.error(where, f"pages numbered {sorted(pages)}: expected 1 to {len(pages)}")
        self.page_count = len(pages) or None
        if not any(words for _, _, words in pages.values()):
            return None
        for number, (width, height, _) in pages.items():
            if width <= 0 or height <= 0:
                raise self.error(where, f"page {number} has a size of {width:g} x {height:g}")
        return Document(pages=[Page(width=width, height=height, words=words)
                               for _, (width, height, words) in sorted(pages.items())])

    def words(self, page: dict[str, Any], where: str) -> list[Word]:
        if "words" in page:  # v3: the page's words
            listed = self.as_list(page["words"], f"{where}.words")
            raw_words = [(f"{where}.words[{i}]", word) for i, word in enumerate(listed)]
        else:  # v2.1: each line's words
            raw_words = []
            for i, line in enumerate(self.as_list(page.get("lines", []), f"{where}.lines")):
                line_where = f"{where}.lines[{i}]"
                words = self.as_object(line, line_where).get("words", [])
                raw_words += [(f"{line_where}.words[{j}]", w)
                              for j, w in enumerate(self.as_list(words, f"{line_where}.words"))]
        words = []
        for word_where, raw in raw_words:
            word = self.as_object(raw, word_where)
            self.word_confidence(word, word_where)
            text_key = "content" if "content" in word else "text"
            # v3 and later: a polygon; v2.1 and the 2021 and 2022 previews: a boundingBox of 8 numbers
            shape = "boundingBox" if "boundingBox" in word or text_key == "text" else "polygon"
            self.preview = self.preview or (shape == "boundingBox" and text_key == "content")
            text = self.as_text(self.required(word, text_key, word_where), f"{word_where}.{text_key}")
            box = self.polygon(self.required(word, shape, word_where), f"{word_where}.{shape}")
            # checked here (a box of finite numbers, in order): built without the model's checks, its set of
            # fields shared, which halves a word's memory (a result may hold millions)
            words.append(Word.model_construct(_WORD_FIELDS, text=text, bbox=box))
        return words


    def word_confidence(self, word: dict[str, Any], where: str) -> None:
        """Keep a word's confidence under its text span (v3) or its reference (v2.1), for :meth:`ocr`."""
        if word.get("confidence") is None:
            return
        confidence = self.as_number(word["confidence"], f"{where}.confidence")
        if not 0.0 <= confidence <= 1.0:
            raise self.error(f"{where}.confidence", f"{show(word['confidence'])} is not in [0, 1]")
        span = word.get("span")
        if isinstance(span, dict) and isinstance(span.get("offset"), int) and isinstance(span.get("length"), int):
            self.word_spans.add(span["offset"], span["offset"] + span["length"], confidence)
        elif where.startswith("analyzeResult.readResults[") or where.startswith("readResults["):
            # v2.1 elements name a word by its place: #/readResults/0/lines/1/words/2
            self.word_references["#/" + where.removeprefix("analyzeResult.").replace("[", "/").replace("]", "")
                                 .replace(".", "/")] = confidence


def _plain_numbers(values: list[Any]) -> list[float] | None:
    """``values`` as floats when all are finite numbers (the polygons of every word: checked in one pass)."""
    if not all(type(value) is float or type(value) is int for value in values):
        return None
    try:
        numbers = list(map(float, values))
    except OverflowError:  # an integer past a double's range
        return None
    return numbers if all(map(math.isfinite, numbers)) else None


def _step(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key
