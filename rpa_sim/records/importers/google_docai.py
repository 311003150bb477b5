"""Import Google Document AI ``Document`` outputs (a processor's, or a batch's) as KIE predictions, one record each.

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
shards, and a folder per input document (:mod:`.google_batch`).

Keys come in either spelling: the REST API's JSON and the client's
``Document.to_json`` write camelCase (``mentionText``); the Python client's
``Document.to_dict`` and ``MessageToDict(..., preserving_proto_field_name=True)``
write the field names of the protocol buffer, snake_case (``mention_text``,
``page_anchor``), with ``type`` written ``type_`` by proto-plus. Every key is
read in each spelling.

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
- signals: ``ocr``, the lowest ``layout.confidence`` of the OCR tokens whose
  text anchors overlap the entity's ``textAnchor``, when the pages give
  tokens with confidences (:mod:`~rpa_sim.records.importers.word_confidence`);
  the service gives no other score per entity.
- evidence: each page reference with a ``boundingPoly``, its box in the
  page's pixels (normalized vertices times the page's ``dimension``, or its
  ``image`` size when it has no dimension; a vertex's coordinate left out is
  0), on page index ``page``.
- document: the ``tokens`` of the pages, as OCR words (text from the anchors,
  trimmed), when the pages have any; otherwise none.
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from rpa_sim.common.errors import InputError, UsageError, shown
from rpa_sim.records.importers import ImportReport
from rpa_sim.records.importers._json import FieldChecks, load_json, show
from rpa_sim.records.importers.google_batch import SourceDocument, documents_of, shards_in_order, whole_number
from rpa_sim.records.importers.service import (
    FieldMap,
    bounding_box,
    joined_records,
    read_joins,
)
from rpa_sim.records.importers.sources import each_source
from rpa_sim.records.importers.textract import PAGE_SIZE
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

__all__ = ["FORMAT", "VALUE_CHOICES", "import_google_docai", "property_key"]

FORMAT = "google-docai"
VALUE_CHOICES = ("mention", "normalized")
ValueChoice = Literal["mention", "normalized"]
# pixels to two decimals: finer than the float32 precision of Document AI's normalized vertices
_BOX_DECIMALS = 2
# keys by which a Document is told from any other JSON object, in either spelling
_DOCUMENT_KEYS = frozenset({"entities", "pages", "text", "shardInfo", "shard_info", "uri", "mimeType", "mime_type"})
_NO_VALUE = "entities without a mentionText or normalizedValue.text"
# what follows from the properties' own reasons (counted), or from --fields dropping them all: no value lost itself
_NO_PROPERTY_LEFT = "parent entities with no property left (no group written)"


@functools.cache
def _spellings(name: str) -> tuple[str, ...]:
    """A key's spellings: camelCase as given, snake_case, and snake_case with proto-plus's ``_`` (``type_``).

    >>> _spellings("mentionText"), _spellings("type")
    (('mentionText', 'mention_text', 'mention_text_'), ('type', 'type_'))
    """
    snake = re.sub(r"[A-Z]", lambda upper: "_" + upper.group().lower(), name)
    return tuple(dict.fromkeys((name, snake, snake + "_")))


def property_key(parent_type: str, property_type: str) -> str:
    """A property's key inside its parent's group: its type without the parent's ``<type>/`` prefix.

    Examples
    --------
    >>> property_key("line_item", "line_item/unit_price"), property_key("vat", "tax_rate")
    ('unit_price', 'tax_rate')
    """
    return property_type.removeprefix(f"{parent_type}/") or property_type


def import_google_docai(source: str | Path, *, value: ValueChoice = "mention", document_id: str | None = None,
                        ground_truth: str | Path | None = None, fields: str | Path | None = None,
                        skip_invalid: bool = False,
                        join_lines: bool = False) -> tuple[Iterator[KIERecord], ImportReport]:
    """Read Document AI ``Document`` outputs (a file, its shards, a folder or a batch's output) into KIE records.

    Parameters
    ----------
    source : path-like
        A ``Document`` JSON file (or a ``ProcessResponse`` holding one under
        ``document``); a folder of the shards of one document (merged in
        ``shardIndex`` order); a folder of whole ``Document`` files; or a
        batch's output folder, a folder per document holding its shards
        (:func:`~rpa_sim.records.importers.google_batch.documents_of`).
    value : {"mention", "normalized"}, default="mention"
        Which string is the value: ``mentionText`` or ``normalizedValue.text``.
    document_id : str, optional
        The record's id when ``source`` is one document; by default the file's
        stem or the folder's name.
    ground_truth : path-like, optional
        A ground truth to join by id (:func:`~rpa_sim.records.importers.service.read_ground_truth`).
    fields : path-like, optional
        A YAML map of entity types to ground-truth keys (:class:`~rpa_sim.records.importers.service.FieldMap`).
    skip_invalid : bool, default=False
        Leave out (and count) a document with a problem rather than stop
        (:func:`~rpa_sim.records.importers.sources.each_source`).
    join_lines : bool, default=False
        Write each line break of a value (a two-line address) as a space.

    Returns
    -------
    records : iterator of KIERecord
        One per document, lazily, in the folder's natural order.
    report : ImportReport
        Complete once the records are consumed.

    Raises
    ------
    ValueError
        For a ``value`` not in :data:`VALUE_CHOICES`.
    UsageError
        For an empty ``document_id``, or one for a source of several documents.
    InputError
        At the call for a missing source, an empty folder or a bad ground
        truth or map; while iterating for a file that is not a ``Document``, a
        shard missing (its index named) or given twice, a confidence outside
        [0, 1], an anchor outside the text, a page reference to no page, an
        entity none of whose values could be read..., naming the file and the
        field path.

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
    if document_id == "":
        raise UsageError("--id \"\": a record's id is a non-empty string (every reader refuses an empty one)")
    documents = documents_of(Path(source))
    if document_id is not None:
        if len(documents) > 1:
            raise UsageError(f"--id {shown(document_id)} names the record of one document, and {source} holds "
                             f"{len(documents)}: leave it out, and the records take the files' or folders' names")
        documents = [SourceDocument(documents[0].name, documents[0].files, document_id)]
    report = ImportReport(FORMAT)
    truth, field_map = read_joins(ground_truth=ground_truth, fields=fields, report=report)
    report.notes.append("value = mentionText: what the page shows" if value == "mention" else
                        "value = normalizedValue.text: Document AI's normal form (dates as ISO, money as '140 USD')")
    options = _Options(value, field_map)
    stats: Counter[str] = Counter()
    records = each_source(documents, lambda document: _record(document, options, report.unmapped, stats),
                          report=report, skip_invalid=skip_invalid, join_lines=join_lines,
                          not_lost=(_NO_PROPERTY_LEFT,))
    return joined_records(_noted(records, stats, options, report), ground_truth=truth, fields=field_map,
                          report=report), report


@dataclass(frozen=True)
class _Options:
    value: ValueChoice
    fields: FieldMap


def _record(document: SourceDocument, options: _Options, unmapped: Counter[str],
            totals: Counter[str]) -> Iterator[KIERecord]:
    """The one record of a document; its counts join ``totals`` only once it is read whole."""
    stats: Counter[str] = Counter()
    shards = shards_in_order([_Shard(str(path), load_json(path), options, unmapped, stats)
                              for path in document.files], str(document.name))
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
    with_words = has_words and all(page is not None for page in pages)
    stats["shards" if len(shards) > 1 else "whole"] += 1
    stats["with_words" if with_words else "without_words"] += 1
    totals.update(stats)
    yield KIERecord(id=document.record_id, prediction=PredictedExtraction(entities=entities, groups=groups),
                    document=Document(pages=pages) if with_words else None)


def _noted(records: Iterator[KIERecord], stats: Counter[str], options: _Options,
           report: ImportReport) -> Iterator[KIERecord]:
    yield from records
    if stats["shards"]:
        report.notes.append(f"documents merged from their shards in shardIndex order: {stats['shards']}")
    if stats["parents"]:
        report.notes.append("parent entities written as groups of their properties (their own text and confidence "
                            f"are not a field): {stats['parents']}")
    if stats["fallback"]:
        missing, used = ("mentionText", "normalizedValue.text") if options.value == "mention" else (
            "normalizedValue.text", "mentionText")
        report.notes.append(f"entities without a {missing}, whose {used} is the value: {stats['fallback']}")
    if stats["ocr"]:
        report.notes.append(f"entities with the signal ocr, the lowest confidence of the OCR tokens of their text: "
                            f"{stats['ocr']}")
    if stats["no_confidence"]:
        report.notes.append("entities without a confidence, written with a missing confidence (null; protocol "
                            "buffers' JSON also leaves out a confidence of 0: missing_confidence: 0 reads it so): "
                            f"{stats['no_confidence']}")
    if stats["snake_case"]:
        report.notes.append(f"files with snake_case keys (the Python client's to_dict): {stats['snake_case']}")
    if stats["image_size"]:
        report.notes.append(f"pages without a dimension, sized by their image (pages[].image.width and height): "
                            f"{stats['image_size']}")
    if stats["virtual_page"]:
        report.notes.append(f"evidence boxes on a virtual {PAGE_SIZE:g} x {PAGE_SIZE:g} px page (the page has no "
                            f"dimension and no image size): {stats['virtual_page']}")
    if stats["with_words"]:
        report.notes.append("document: the pages' tokens as OCR words, boxes in page pixels" +
                            (f": {stats['with_words']}" if stats["with_words"] + stats["without_words"] > 1 else ""))
    if stats["without_words"]:
        report.notes.append("no OCR tokens in the pages: no document, grounding stays unknown" +
                            (f": {stats['without_words']}" if stats["with_words"] + stats["without_words"] > 1
                             else ""))


class _Shard(FieldChecks):
    """One file of the document (the whole of it when it is not sharded), read with checks that name the file
    and the field path of any problem, in either spelling of the keys."""

    def __init__(self, path: str, data: Any, options: _Options, unmapped: Counter[str], stats: Counter[str]) -> None:
        self.path, self.options, self.unmapped, self.stats = path, options, unmapped, stats
        self.data = self.document_of(data)
        entities = self.get(self.data, "entities")
        first = entities[0] if isinstance(entities, list) and entities and isinstance(entities[0], dict) else {}
        if {"mime_type", "shard_info"} & self.data.keys() or {"mention_text", "type_", "page_anchor"} & first.keys():
            stats["snake_case"] += 1
        #: where the shard's pages start among the document's, and their sizes (None: no size)
        self.first_page = 0
        self.page_sizes: list[tuple[float, float] | None] = []
        #: the tokens' confidences by text span, for an entity's ``ocr`` signal
        self.token_confidences = WordConfidences()

    def document_of(self, data: Any) -> dict[str, Any]:
        """The ``Document`` of a file: the file itself, or its ``document`` (a ``ProcessResponse``)."""
        if isinstance(data, dict) and isinstance(data.get("document"), dict) and not _DOCUMENT_KEYS & data.keys():
            data = data["document"]
        if not isinstance(data, dict) or not _DOCUMENT_KEYS & data.keys():
            keys = sorted(data) if isinstance(data, dict) else show(data)
            raise self.error("", f"not a Document AI Document: none of {sorted(_DOCUMENT_KEYS)} (got {keys})")
        return data

    # ------------------------------------------------------------------- either spelling

    @staticmethod
    def key(container: dict[str, Any], name: str) -> str:
        """The spelling of ``name`` (camelCase) that ``container`` uses; ``name`` when it has none."""
        return next((key for key in _spellings(name) if key in container), name)

    def get(self, container: dict[str, Any], name: str, default: Any = None) -> Any:
        return container.get(self.key(container, name), default)

    def step(self, where: str, container: dict[str, Any], name: str) -> str:
        """The path of ``name`` in ``container``, as the file spells it."""
        key = self.key(container, name)
        return f"{where}.{key}" if where else key

    def member(self, container: dict[str, Any], name: str, where: str) -> Any:
        """``container``'s ``name`` in either spelling, required."""
        return self.required(container, self.key(container, name), where)

    # ------------------------------------------------------------------- shard

    def shard_info(self) -> tuple[int, int, int]:
        """The shard's ``shardIndex``, ``shardCount`` and ``textOffset`` (protocol buffers leave out a 0)."""
        where = self.step("", self.data, "shardInfo")
        info = self.as_object(self.get(self.data, "shardInfo") or {}, where)
        index, count, offset = (self.count(self.get(info, name, 0), self.step(where, info, name))
                                for name in ("shardIndex", "shardCount", "textOffset"))
        return index, count, offset

    def text_length(self) -> int:
        return len(self.text)

    def error(self, field: str, problem: str) -> InputError:
        return InputError(problem, path=self.path, field=field or None)

    def count(self, value: Any, where: str) -> int:
        """A protocol-buffer integer (an int64 is written as a string), at least 0."""
        number = whole_number(value)
        if number is None:
            raise self.error(where, f"expected a whole number >= 0, got {show(value)}")
        return number

    @property
    def text(self) -> str:
        return self.as_text(self.get(self.data, "text", ""), "text")

    # ------------------------------------------------------------------- pages

    def pages(self) -> list[Page | None]:
        """The shard's pages, ``None`` for a page without a size (no size for its words)."""
        pages: list[Page | None] = []
        for index, raw in enumerate(self.as_list(self.get(self.data, "pages", []), "pages")):
            where = f"pages[{index}]"
            page = self.as_object(raw, where)
            size = self.size(page, where)
            self.page_sizes.append(size)
            tokens = self.as_list(self.get(page, "tokens", []), self.step(where, page, "tokens"))
            if size is None:
                if tokens:
                    raise self.error(f"{where}.dimension", "missing: the page has tokens but no size")
                pages.append(None)
                continue
            tokens_where = self.step(where, page, "tokens")
            words = [word for i, token in enumerate(tokens)
                     if (word := self.word(token, f"{tokens_where}[{i}]", size)) is not None]
            pages.append(Page(width=size[0], height=size[1], words=words))
        return pages

    def size(self, page: dict[str, Any], where: str) -> tuple[float, float] | None:
        """The page's ``dimension``; without one, the size of its ``image`` (in pixels too); else ``None``."""
        name = "dimension" if self.key(page, "dimension") in page else "image"
        if self.key(page, name) not in page:
            return None
        size_where = self.step(where, page, name)
        size = self.as_object(self.get(page, name), size_where)
        if name == "image" and not ({"width", "height"} & size.keys()):
            return None
        width, height = (self.as_number(size.get(side, 0), f"{size_where}.{side}") for side in ("width", "height"))
        if width <= 0 or height <= 0:
            raise self.error(size_where, f"a page of {width:g} x {height:g}")
        if name == "image":
            self.stats["image_size"] += 1
        return width, height

    def word(self, raw: Any, where: str, size: tuple[float, float]) -> Word | None:
        token = self.as_object(raw, where)
        layout = self.as_object(self.member(token, "layout", where), self.step(where, token, "layout"))
        layout_where = self.step(where, token, "layout")
        anchor_where = self.step(layout_where, layout, "textAnchor")
        text = self.anchored_text(self.get(layout, "textAnchor", {}), anchor_where)
        if self.get(layout, "confidence") is not None:
            confidence = self.unit(layout, self.step(layout_where, layout, "confidence"))
            for start, end in self.segments(self.get(layout, "textAnchor", {}), anchor_where):
                self.token_confidences.add(start, end, confidence)
        if not text.strip():
            return None
        box = self.box(self.member(layout, "boundingPoly", layout_where), self.step(layout_where, layout,
                                                                                    "boundingPoly"), size)
        return Word(text=text.strip(), bbox=box)

    def anchored_text(self, raw: Any, where: str) -> str:
        text = self.text
        return "".join(text[start:end] for start, end in self.segments(raw, where))

    def segments(self, raw: Any, where: str) -> list[tuple[int, int]]:
        """A text anchor's ``[start, end)`` segments of the text."""
        anchor = self.as_object(raw, where)
        length, found = len(self.text), []
        segments_where = self.step(where, anchor, "textSegments")
        for index, raw_segment in enumerate(self.as_list(self.get(anchor, "textSegments", []), segments_where)):
            segment_where = f"{segments_where}[{index}]"
            segment = self.as_object(raw_segment, segment_where)
            start, end = (self.count(self.get(segment, name, 0), self.step(segment_where, segment, name))
                          for name in ("startIndex", "endIndex"))
            if not start <= end <= length:
                raise self.error(segment_where, f"[{start}, {end}) is not within the text's {length} characters")
            found.append((start, end))
        return found

    def box(self, raw: Any, where: str, size: tuple[float, float] | None) -> Box:
        """A bounding polygon's box in page pixels: normalized vertices times the page size, else pixel vertices."""
        poly = self.as_object(raw, where)
        normalized = bool(self.get(poly, "normalizedVertices"))
        name = "normalizedVertices" if normalized else "vertices"
        vertices_where = self.step(where, poly, name)
        vertices = self.as_list(self.member(poly, name, where), vertices_where)
        if not vertices:
            raise self.error(vertices_where, "empty: a polygon needs vertices")
        points = []
        for index, raw_vertex in enumerate(vertices):
            vertex = self.as_object(raw_vertex, f"{vertices_where}[{index}]")
            # protocol buffers' JSON leaves out a coordinate of 0
            x, y = (self.as_number(vertex.get(axis, 0), f"{vertices_where}[{index}].{axis}") for axis in ("x", "y"))
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
            raise self.error(vertices_where, "coordinates too large: the box is beyond any page")
        return box

    # ------------------------------------------------------------------- entities

    def entities(self) -> tuple[list[PredictedEntity], list[PredictedGroup]]:
        fields = self.options.fields
        entities, groups = [], []
        for index, raw in enumerate(self.as_list(self.get(self.data, "entities", []), "entities")):
            where = f"entities[{index}]"
            entity = self.as_object(raw, where)
            entity_type = self.as_text(self.member(entity, "type", where), self.step(where, entity, "type"))
            properties_where = self.step(where, entity, "properties")
            properties = self.as_list(self.get(entity, "properties", []), properties_where)
            if not properties:
                if self.present(entity_type, entity):
                    predicted = self.entity(entity, where, fields.key(entity_type))
                    if predicted is not None:
                        entities.append(predicted)
                continue
            self.stats["parents"] += 1
            # the properties with a value, each read once: (the child, its path, its type)
            present = []
            for p, raw_property in enumerate(properties):
                property_where = f"{properties_where}[{p}]"
                child = self.as_object(raw_property, property_where)
                child_type = self.as_text(self.member(child, "type", property_where),
                                          self.step(property_where, child, "type"))
                if self.get(child, "properties"):
                    self.unmapped["properties with properties of their own (canonical groups do not nest)"] += 1
                elif self.present(child_type, child):
                    present.append((child, property_where, child_type))
            group_name = fields.group_key(entity_type, values=len(present))
            if group_name is None:
                continue
            members = [self.entity(child, property_where,
                                   fields.key(child_type, default=property_key(entity_type, child_type)))
                       for child, property_where, child_type in present]
            kept = [member for member in members if member is not None]
            if kept:
                groups.append(PredictedGroup(name=group_name, entities=kept))
            else:
                self.unmapped[_NO_PROPERTY_LEFT] += 1
        return entities, groups

    def present(self, entity_type: str, entity: dict[str, Any]) -> bool:
        """Whether an entity has a value (a mentionText or normalizedValue.text); one without is counted once,
        whatever --fields says of its type."""
        normalized = self.get(entity, "normalizedValue")
        if self.get(entity, "mentionText") is not None or (normalized is not None and (
                not isinstance(normalized, dict) or normalized.get("text") is not None)):
            return True  # (a normalizedValue that is not an object is read, and refused, as the value)
        self.options.fields.seen(entity_type)
        self.unmapped[_NO_VALUE] += 1
        return False

    def entity(self, entity: dict[str, Any], where: str, key: str | None) -> PredictedEntity | None:
        """An entity with a value, keyed ``key`` (through --fields); None when the map drops it."""
        if key is None:  # dropped by --fields: not read further
            return None
        value = self.value(entity, where)
        assert value is not None, "an entity present has a mentionText or a normalizedValue.text"
        ocr = (self.token_confidences.lowest(self.segments(self.get(entity, "textAnchor"),
                                                           self.step(where, entity, "textAnchor")))
               if self.key(entity, "textAnchor") in entity else None)
        self.stats["ocr"] += ocr is not None
        return PredictedEntity(key=key, value=value, confidence=self.confidence(entity, where),
                               evidence=self.evidence(entity, where) or None,
                               signals=None if ocr is None else {OCR_SIGNAL: ocr})

    def value(self, entity: dict[str, Any], where: str) -> str | None:
        mention = self.get(entity, "mentionText")
        if mention is not None:
            mention = self.as_text(mention, self.step(where, entity, "mentionText"))
        normalized = None
        normalized_where = self.step(where, entity, "normalizedValue")
        if self.key(entity, "normalizedValue") in entity:
            normalized_value = self.as_object(self.get(entity, "normalizedValue"), normalized_where)
            if normalized_value.get("text") is not None:
                normalized = self.as_text(normalized_value["text"], f"{normalized_where}.text")
        first, second = (mention, normalized) if self.options.value == "mention" else (normalized, mention)
        if first is None and second is not None:
            self.stats["fallback"] += 1
        return first if first is not None else second

    def confidence(self, entity: dict[str, Any], where: str) -> float | None:
        if entity.get("confidence") is None:
            self.stats["no_confidence"] += 1
            return None
        return self.unit(entity, f"{where}.confidence")

    def unit(self, container: dict[str, Any], where: str) -> float:
        """``container``'s ``confidence``, a number in [0, 1] (``where`` names it)."""
        confidence = self.as_number(container["confidence"], where)
        if not 0.0 <= confidence <= 1.0:
            raise self.error(where, f"{show(container['confidence'])} is not in [0, 1]")
        return confidence

    def evidence(self, entity: dict[str, Any], where: str) -> list[Evidence]:
        anchor_where = self.step(where, entity, "pageAnchor")
        anchor = self.as_object(self.get(entity, "pageAnchor", {}), anchor_where)
        refs_where = self.step(anchor_where, anchor, "pageRefs")
        evidence = []
        for index, raw in enumerate(self.as_list(self.get(anchor, "pageRefs", []), refs_where)):
            ref_where = f"{refs_where}[{index}]"
            ref = self.as_object(raw, ref_where)
            page = self.count(ref.get("page", 0), f"{ref_where}.page")
            sizes = self.page_sizes
            if sizes and page >= len(sizes):
                raise self.error(f"{ref_where}.page", f"page {page}, but the Document has pages 0 to {len(sizes) - 1}")
            if self.key(ref, "boundingPoly") not in ref:
                continue
            size = sizes[page] if sizes else None
            box = self.box(self.get(ref, "boundingPoly"), self.step(ref_where, ref, "boundingPoly"), size)
            evidence.append(Evidence(page=self.first_page + page, bbox=box))
        return evidence
