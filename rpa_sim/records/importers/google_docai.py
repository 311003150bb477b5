"""Import a Google Document AI ``Document`` (a processor's output) as the KIE predictions of one document.

A Document AI processor (Invoice Parser, Expense Parser, a custom extractor)
returns a ``Document``: the document's ``text``, its ``pages`` (``dimension``,
OCR ``tokens`` with boxes and anchors into ``text``) and the extracted
``entities``. Each entity has a ``type``, a ``mentionText`` (the text read on
the page), an optional ``normalizedValue`` (``text``: a date as ISO, money as
``"140 USD"``), a ``confidence``, a ``pageAnchor`` (``pageRefs[]``: a ``page``
index, left out when it is 0, and a ``boundingPoly`` with
``normalizedVertices`` as fractions of the page) and, for a parent entity
(``line_item``, ``vat``), ``properties``: child entities typed
``line_item/description``... Batch processing writes a large document as
shards: several JSON files of one ``Document``, each with ``shardInfo``
(``shardIndex``, ``shardCount``) and its part of the text and pages.

Mapping (one KIE record per document; ``docs/importers/google-docai.md``):

- id: the file's stem (a folder of shards: the folder's name), or ``document_id``.
- shards: merged in ``shardIndex`` order: pages follow one another, and each
  shard's anchors point into its own text and a page reference into its own
  pages (the shard's first page is its reference 0).
- an entity without properties -> an entity keyed by its ``type``; a parent
  -> a group named after its ``type``, whose entities are its properties,
  keyed by their ``type`` without the parent's prefix (``description``);
  ``--fields`` looks them up by the full type (``line_item/description``). A
  parent's own text and confidence (1 for every parent of the shared sample)
  are not a field, and properties of properties are not mapped (canonical
  groups do not nest); both are counted.
- value (``value="mention"``, the default): ``mentionText``, what the page
  shows, so what ANLS and grounding compare with a reading of the page;
  ``value="normalized"``: ``normalizedValue.text``. Either falls back to the
  other when it is missing, counted.
- confidence: ``confidence``; an entity without one gets a missing confidence
  (null). Document AI writes JSON from protocol buffers, which leave out a
  confidence of exactly 0: a policy's ``missing_confidence: 0`` reads it so.
- evidence: each page reference with a ``boundingPoly``, its box in the
  page's pixels (normalized vertices times the page's ``dimension``; a
  vertex's coordinate left out is 0), on page index ``page``.
- document: the ``tokens`` of the pages, as OCR words (text from the anchors,
  trimmed), when the pages have any; otherwise none.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from rpa_sim.common.errors import InputError
from rpa_sim.records.importers import ImportReport
from rpa_sim.records.importers._json import FieldChecks, load_json, show
from rpa_sim.records.importers.service import (
    FieldMap,
    bounding_box,
    joined_records,
    read_joins,
    source_files,
)
from rpa_sim.records.importers.textract import PAGE_SIZE
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

__all__ = ["FORMAT", "VALUE_CHOICES", "import_google_docai", "property_key"]

FORMAT = "google-docai"
VALUE_CHOICES = ("mention", "normalized")
ValueChoice = Literal["mention", "normalized"]
# pixels to two decimals: finer than the float32 precision of Document AI's normalized vertices
_BOX_DECIMALS = 2
# keys by which a Document is told from any other JSON object
_DOCUMENT_KEYS = frozenset({"entities", "pages", "text", "shardInfo", "uri", "mimeType"})


def property_key(parent_type: str, property_type: str) -> str:
    """A property's key inside its parent's group: its type without the parent's ``<type>/`` prefix.

    Examples
    --------
    >>> property_key("line_item", "line_item/unit_price"), property_key("vat", "tax_rate")
    ('unit_price', 'tax_rate')
    """
    return property_type.removeprefix(f"{parent_type}/") or property_type


def import_google_docai(source: str | Path, *, value: ValueChoice = "mention", document_id: str | None = None,
                        ground_truth: str | Path | None = None,
                        fields: str | Path | None = None) -> tuple[Iterator[KIERecord], ImportReport]:
    """Read a Document AI ``Document`` (one JSON file, or a folder of its shards) into one KIE record.

    Parameters
    ----------
    source : path-like
        A ``Document`` JSON file (or a ``ProcessResponse`` holding one under
        ``document``), or a folder of the shards of one document (its
        ``*.json`` files, merged in ``shardIndex`` order).
    value : {"mention", "normalized"}, default="mention"
        Which string is the value: ``mentionText`` or ``normalizedValue.text``.
    document_id : str, optional
        The record's id; by default the file's stem or the folder's name.
    ground_truth : path-like, optional
        A ground truth to join by id (:func:`~rpa_sim.records.importers.service.read_ground_truth`).
    fields : path-like, optional
        A YAML map of entity types to ground-truth keys (:class:`~rpa_sim.records.importers.service.FieldMap`).

    Returns
    -------
    records : iterator of KIERecord
        The one record, lazily.
    report : ImportReport
        Complete once the records are consumed.

    Raises
    ------
    InputError
        At the call for a missing source, an empty folder or a bad ground
        truth or map; while iterating for a file that is not a ``Document``, a
        shard missing or given twice, a confidence outside [0, 1], an anchor
        outside the text, a page reference to no page..., naming the file and
        the field path.

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> document = {"text": "Total $9.50", "entities": [{"type": "total_amount", "mentionText": "$9.50",
    ...     "normalizedValue": {"text": "9.5 USD"}, "confidence": 0.93, "pageAnchor": {"pageRefs": [
    ...     {"boundingPoly": {"normalizedVertices": [{"x": 0.5}, {"x": 0.75, "y": 0.1}]}}]}}],
    ...     "pages": [{"pageNumber": 1, "dimension": {"width": 800, "height": 1000}}]}
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "receipt.json"
    >>> _ = path.write_text(json.dumps(document))
    >>> records, report = import_google_docai(path)
    >>> [(r.id, e.key, e.value, e.confidence, e.evidence) for r in records for e in r.prediction.entities]
    [('receipt', 'total_amount', '$9.50', 0.93, [Evidence(page=0, bbox=(400.0, 0.0, 600.0, 100.0))])]
    """
    if value not in VALUE_CHOICES:
        raise ValueError(f"value must be one of {VALUE_CHOICES}, got {value!r}")
    source = Path(source)
    files = source_files(source, what="the shards of one Document AI Document")
    report = ImportReport(FORMAT)
    truth, field_map = read_joins(ground_truth=ground_truth, fields=fields, report=report)
    report.notes.append("value = mentionText: what the page shows" if value == "mention" else
                        "value = normalizedValue.text: Document AI's normal form (dates as ISO, money as '140 USD')")
    record_id = document_id if document_id is not None else source.name if source.is_dir() else source.stem
    options = _Options(value, field_map)
    return joined_records(_record(files, record_id, options, report), ground_truth=truth, fields=field_map,
                          report=report), report


@dataclass(frozen=True)
class _Options:
    value: ValueChoice
    fields: FieldMap


def _record(files: list[Path], record_id: str, options: _Options, report: ImportReport) -> Iterator[KIERecord]:
    stats: Counter[str] = Counter()
    shards = _in_order([_Shard(str(path), load_json(path), options, report.unmapped, stats) for path in files])
    pages: list[Page | None] = []
    for shard in shards:
        shard.first_page = len(pages)
        pages += shard.pages()
    entities: list[PredictedEntity] = []
    groups: list[PredictedGroup] = []
    for shard in shards:
        shard_entities, shard_groups = shard.entities()
        entities += shard_entities
        groups += shard_groups
    has_words = any(page is not None and page.words for page in pages)
    document = Document(pages=pages) if has_words and all(page is not None for page in pages) else None
    yield KIERecord(id=record_id, prediction=PredictedExtraction(entities=entities, groups=groups),
                    document=document)
    _notes(len(shards), document is not None, stats, options, report)


def _notes(shards: int, with_words: bool, stats: Counter[str], options: _Options, report: ImportReport) -> None:
    if shards > 1:
        report.notes.append(f"shards merged in shardIndex order: {shards}")
    if stats["parents"]:
        report.notes.append("parent entities written as groups of their properties (their own text and confidence "
                            f"are not a field): {stats['parents']}")
    if stats["fallback"]:
        missing, used = ("mentionText", "normalizedValue.text") if options.value == "mention" else (
            "normalizedValue.text", "mentionText")
        report.notes.append(f"entities without a {missing}, whose {used} is the value: {stats['fallback']}")
    if stats["no_confidence"]:
        report.notes.append("entities without a confidence, written with a missing confidence (null; protocol "
                            "buffers' JSON also leaves out a confidence of 0: missing_confidence: 0 reads it so): "
                            f"{stats['no_confidence']}")
    if stats["virtual_page"]:
        report.notes.append(f"evidence boxes on a virtual {PAGE_SIZE:g} x {PAGE_SIZE:g} px page (the page has no "
                            f"dimension): {stats['virtual_page']}")
    report.notes.append("document: the pages' tokens as OCR words, boxes in page pixels" if with_words else
                        "no OCR tokens in the pages: no document, grounding stays unknown")


def _in_order(shards: list[_Shard]) -> list[_Shard]:
    """The files as the shards of one document, in ``shardIndex`` order, checked to be all there once."""
    ordered = sorted(shards, key=lambda shard: shard.shard_index(len(shards)))
    indices = [shard.shard_index(len(shards)) for shard in ordered]
    if indices != list(range(len(shards))):
        raise InputError(f"shard indices {indices}: expected each of 0 to {len(shards) - 1} once",
                         path=str(Path(shards[0].path).parent))
    return ordered


class _Shard(FieldChecks):
    """One file of the document (the whole of it when it is not sharded), read with checks that name the file
    and the field path of any problem."""

    def __init__(self, path: str, data: Any, options: _Options, unmapped: Counter[str], stats: Counter[str]) -> None:
        self.path, self.options, self.unmapped, self.stats = path, options, unmapped, stats
        self.data = self.document_of(data)
        #: where the shard's pages start among the document's, and their sizes (None: no dimension)
        self.first_page = 0
        self.page_sizes: list[tuple[float, float] | None] = []

    def document_of(self, data: Any) -> dict[str, Any]:
        """The ``Document`` of a file: the file itself, or its ``document`` (a ``ProcessResponse``)."""
        if isinstance(data, dict) and isinstance(data.get("document"), dict) and not _DOCUMENT_KEYS & data.keys():
            data = data["document"]
        if not isinstance(data, dict) or not _DOCUMENT_KEYS & data.keys():
            keys = sorted(data) if isinstance(data, dict) else show(data)
            raise self.error("", f"not a Document AI Document: none of {sorted(_DOCUMENT_KEYS)} (got {keys})")
        return data

    def shard_index(self, files: int) -> int:
        """The shard's ``shardIndex``, checked against its ``shardCount`` and the count of files given."""
        info = self.as_object(self.data.get("shardInfo") or {}, "shardInfo")
        index = self.count(info.get("shardIndex", 0), "shardInfo.shardIndex")
        count = self.count(info.get("shardCount", 0), "shardInfo.shardCount")
        if max(count, 1) != files:
            raise self.error("shardInfo.shardCount", f"shard {index + 1} of {count}, but {files} files are given: "
                                                     f"give the folder that holds all the shards of one document, "
                                                     f"and only them" if count > 1 else
                             f"not a shard, but {files} files are given: a folder holds the shards of one document")
        return index

    def error(self, field: str, problem: str) -> InputError:
        return InputError(problem, path=self.path, field=field or None)

    def count(self, value: Any, where: str) -> int:
        """A protocol-buffer integer (an int64 is written as a string), at least 0."""
        if isinstance(value, str) and value.isdigit():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise self.error(where, f"expected a whole number >= 0, got {show(value)}")
        return value

    @property
    def text(self) -> str:
        return self.as_text(self.data.get("text", ""), "text")

    # ------------------------------------------------------------------- pages

    def pages(self) -> list[Page | None]:
        """The shard's pages, ``None`` for a page without a dimension (no size for its words)."""
        pages: list[Page | None] = []
        for index, raw in enumerate(self.as_list(self.data.get("pages", []), "pages")):
            where = f"pages[{index}]"
            page = self.as_object(raw, where)
            size = self.dimension(page, where)
            self.page_sizes.append(size)
            tokens = self.as_list(page.get("tokens", []), f"{where}.tokens")
            if size is None:
                if tokens:
                    raise self.error(f"{where}.dimension", "missing: the page has tokens but no size")
                pages.append(None)
                continue
            words = [word for i, token in enumerate(tokens)
                     if (word := self.word(token, f"{where}.tokens[{i}]", size)) is not None]
            pages.append(Page(width=size[0], height=size[1], words=words))
        return pages

    def dimension(self, page: dict[str, Any], where: str) -> tuple[float, float] | None:
        if "dimension" not in page:
            return None
        dimension = self.as_object(page["dimension"], f"{where}.dimension")
        width, height = (self.as_number(dimension.get(side, 0), f"{where}.dimension.{side}")
                         for side in ("width", "height"))
        if width <= 0 or height <= 0:
            raise self.error(f"{where}.dimension", f"a page of {width:g} x {height:g}")
        return width, height

    def word(self, raw: Any, where: str, size: tuple[float, float]) -> Word | None:
        layout = self.as_object(self.required(self.as_object(raw, where), "layout", where), f"{where}.layout")
        text = self.anchored_text(layout.get("textAnchor", {}), f"{where}.layout.textAnchor").strip()
        if not text:
            return None
        box = self.box(self.required(layout, "boundingPoly", f"{where}.layout"), f"{where}.layout.boundingPoly", size)
        return Word(text=text, bbox=box)

    def anchored_text(self, raw: Any, where: str) -> str:
        anchor = self.as_object(raw, where)
        text, pieces = self.text, []
        for index, raw_segment in enumerate(self.as_list(anchor.get("textSegments", []), f"{where}.textSegments")):
            segment_where = f"{where}.textSegments[{index}]"
            segment = self.as_object(raw_segment, segment_where)
            start = self.count(segment.get("startIndex", 0), f"{segment_where}.startIndex")
            end = self.count(segment.get("endIndex", 0), f"{segment_where}.endIndex")
            if not start <= end <= len(text):
                raise self.error(segment_where, f"[{start}, {end}) is not within the text's {len(text)} characters")
            pieces.append(text[start:end])
        return "".join(pieces)

    def box(self, raw: Any, where: str, size: tuple[float, float] | None) -> Box:
        """A bounding polygon's box in page pixels: normalized vertices times the page size, else pixel vertices."""
        poly = self.as_object(raw, where)
        normalized = bool(poly.get("normalizedVertices"))
        key = "normalizedVertices" if normalized else "vertices"
        vertices = self.as_list(self.required(poly, key, where), f"{where}.{key}")
        if not vertices:
            raise self.error(f"{where}.{key}", "empty: a polygon needs vertices")
        points = []
        for index, raw_vertex in enumerate(vertices):
            vertex = self.as_object(raw_vertex, f"{where}.{key}[{index}]")
            # protocol buffers' JSON leaves out a coordinate of 0
            x, y = (self.as_number(vertex.get(axis, 0), f"{where}.{key}[{index}].{axis}") for axis in ("x", "y"))
            points.append((x, y))
        if not normalized:
            return bounding_box(points)
        if size is None:
            self.stats["virtual_page"] += 1
            size = (PAGE_SIZE, PAGE_SIZE)
        x0, y0, x1, y1 = bounding_box(points)
        width, height = size
        box = (round(x0 * width, _BOX_DECIMALS), round(y0 * height, _BOX_DECIMALS),
               round(x1 * width, _BOX_DECIMALS), round(y1 * height, _BOX_DECIMALS))
        if not all(math.isfinite(v) for v in box):
            raise self.error(f"{where}.{key}", "coordinates too large: the box is beyond any page")
        return box

    # ------------------------------------------------------------------- entities

    def entities(self) -> tuple[list[PredictedEntity], list[PredictedGroup]]:
        fields = self.options.fields
        entities, groups = [], []
        for index, raw in enumerate(self.as_list(self.data.get("entities", []), "entities")):
            where = f"entities[{index}]"
            entity = self.as_object(raw, where)
            entity_type = self.as_text(self.required(entity, "type", where), f"{where}.type")
            properties = self.as_list(entity.get("properties", []), f"{where}.properties")
            if not properties:
                predicted = self.entity(entity, where, fields.key(entity_type))
                if predicted is not None:
                    entities.append(predicted)
                continue
            self.stats["parents"] += 1
            group_name = fields.key(entity_type)
            if group_name is None:
                continue
            members = []
            for p, raw_property in enumerate(properties):
                property_where = f"{where}.properties[{p}]"
                child = self.as_object(raw_property, property_where)
                child_type = self.as_text(self.required(child, "type", property_where), f"{property_where}.type")
                if child.get("properties"):
                    self.unmapped["properties with properties of their own (canonical groups do not nest)"] += 1
                    continue
                predicted = self.entity(child, property_where,
                                        fields.key(child_type, default=property_key(entity_type, child_type)))
                if predicted is not None:
                    members.append(predicted)
            if members:
                groups.append(PredictedGroup(name=group_name, entities=members))
            else:
                self.unmapped["parent entities with no property left (no group written)"] += 1
        return entities, groups

    def entity(self, entity: dict[str, Any], where: str, key: str | None) -> PredictedEntity | None:
        if key is None:
            return None
        value = self.value(entity, where)
        if value is None:
            self.unmapped["entities without a mentionText or normalizedValue.text"] += 1
            return None
        return PredictedEntity(key=key, value=value, confidence=self.confidence(entity, where),
                               evidence=self.evidence(entity, where) or None)

    def value(self, entity: dict[str, Any], where: str) -> str | None:
        mention = entity.get("mentionText")
        if mention is not None:
            mention = self.as_text(mention, f"{where}.mentionText")
        normalized = None
        if "normalizedValue" in entity:
            normalized_value = self.as_object(entity["normalizedValue"], f"{where}.normalizedValue")
            if normalized_value.get("text") is not None:
                normalized = self.as_text(normalized_value["text"], f"{where}.normalizedValue.text")
        first, second = (mention, normalized) if self.options.value == "mention" else (normalized, mention)
        if first is None and second is not None:
            self.stats["fallback"] += 1
        return first if first is not None else second

    def confidence(self, entity: dict[str, Any], where: str) -> float | None:
        if entity.get("confidence") is None:
            self.stats["no_confidence"] += 1
            return None
        confidence = self.as_number(entity["confidence"], f"{where}.confidence")
        if not 0.0 <= confidence <= 1.0:
            raise self.error(f"{where}.confidence", f"{show(entity['confidence'])} is not in [0, 1]")
        return confidence

    def evidence(self, entity: dict[str, Any], where: str) -> list[Evidence]:
        anchor = self.as_object(entity.get("pageAnchor", {}), f"{where}.pageAnchor")
        evidence = []
        for index, raw in enumerate(self.as_list(anchor.get("pageRefs", []), f"{where}.pageAnchor.pageRefs")):
            ref_where = f"{where}.pageAnchor.pageRefs[{index}]"
            ref = self.as_object(raw, ref_where)
            page = self.count(ref.get("page", 0), f"{ref_where}.page")
            sizes = self.page_sizes
            if sizes and page >= len(sizes):
                raise self.error(f"{ref_where}.page", f"page {page}, but the Document has pages 0 to {len(sizes) - 1}")
            if "boundingPoly" not in ref:
                continue
            size = sizes[page] if sizes else None
            box = self.box(ref["boundingPoly"], f"{ref_where}.boundingPoly", size)
            evidence.append(Evidence(page=self.first_page + page, bbox=box))
        return evidence
