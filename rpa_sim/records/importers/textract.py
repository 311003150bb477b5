"""Import AWS Textract AnalyzeExpense responses as the prediction side of KIE records.

An AnalyzeExpense response (``analyze_expense`` / ``GetExpenseAnalysis``) holds
one or more ``ExpenseDocuments``, each with ``SummaryFields`` (invoice- or
receipt-level fields) and ``LineItemGroups`` (tables of line items). Every
field has a ``Type`` (Textract's normalised name, ``TOTAL``, ``VENDOR_NAME``,
... or ``OTHER``), an optional ``LabelDetection`` (the label printed on the
page) and a ``ValueDetection`` (the value, its confidence on a 0-100 scale
and its geometry as fractions of the page).

Mapping (one KIE record per expense document; ``docs/importers/textract.md``):

- id: ``<file stem>-<n>``, ``n`` the document's 1-based position in
  ``ExpenseDocuments`` (Textract's ``ExpenseIndex``).
- ``SummaryFields`` -> non-grouped entities; each line item -> a group named
  ``line_item``.
- key: the ``Type`` text normalised by :func:`normalise_key`; an ``OTHER``
  field is keyed ``OTHER.<its normalised label>`` (:func:`field_key`).
- value: ``ValueDetection.Text`` as written; a field with an empty value is
  dropped (Textract writes an empty value with confidence 0 for a column that
  a line item leaves blank) and counted.
- confidence: ``ValueDetection.Confidence / 100``; the ``Type`` and label
  confidences are not used (many are a flat 70.0, see the docs).
- ``EXPENSE_ROW`` line-item fields (the whole row's text, which repeats the
  row's other fields) are dropped and counted.
- document: the ``WORD`` blocks of the document's ``Blocks`` when the response
  has them, on a virtual 1000 x 1000 px page (:func:`pixel_box`); otherwise
  none, so that grounding stays unknown rather than trivially 1.
- no ground truth: the format has none.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from rpa_sim.common.errors import InputError
from rpa_sim.common.inputs import check_input
from rpa_sim.records.importers import ImportReport
from rpa_sim.records.importers._json import FieldChecks, load_json, show
from rpa_sim.records.importers.sources import each_source
from rpa_sim.records.models import (
    Document,
    KIERecord,
    Page,
    PredictedEntity,
    PredictedExtraction,
    PredictedGroup,
    Word,
)

__all__ = ["FORMAT", "PAGE_SIZE", "LINE_ITEM_GROUP", "normalise_key", "field_key", "pixel_box",
           "import_textract_expense"]

FORMAT = "textract-expense"
# Textract gives geometry as fractions of the page and never the page's size in
# pixels, so pages get this virtual size. Every distance rpa-sim computes is
# divided by a page or box size and IoU is a ratio of areas: scaling either axis
# changes none of them, so the true aspect ratio is not needed.
PAGE_SIZE = 1000.0
# the whole row's text, which repeats its fields: not imported, but no value lost
_ROW_FIELDS = "EXPENSE_ROW line item fields (the whole row's text, repeating its fields)"
# what a response gave no value for, what follows from it, and the rows: what the service found, no value lost
_NOT_LOST = frozenset({f"{kind}s {what}" for kind in ("summary field", "line item field")
                       for what in ("without a ValueDetection", "with an empty value")} |
                      {"line items with no field left (no group written)", _ROW_FIELDS})
LINE_ITEM_GROUP = "line_item"
OTHER_TYPE = "OTHER"
ROW_TYPE = "EXPENSE_ROW"
# Two decimals of a 1000 px page is 1e-5 of its side, finer than the float32
# precision Textract's coordinates carry.
_BOX_DECIMALS = 2
_NOT_KEY_CHARACTERS = re.compile(r"[\W_]+")


def normalise_key(text: str) -> str:
    """A Type or label text as a key: upper case, each run of other characters than letters and digits -> ``_``.

    Standard Textract types (``VENDOR_NAME``) come out unchanged.

    Examples
    --------
    >>> normalise_key("VENDOR_NAME"), normalise_key("Tran ID#:"), normalise_key("**** TOTAL")
    ('VENDOR_NAME', 'TRAN_ID', 'TOTAL')
    >>> normalise_key("  ")
    ''
    """
    return _NOT_KEY_CHARACTERS.sub("_", text.upper()).strip("_")


def field_key(type_text: str, label: str | None) -> str:
    """The key of a field: its normalised Type, or ``OTHER.<normalised label>`` for an ``OTHER`` field.

    The ``OTHER.`` prefix keeps a label that reads like a standard type (a
    receipt's ``**** TOTAL``) apart from Textract's own ``TOTAL``; a normalised
    label never holds a ``.``, so the key is unambiguous. An ``OTHER`` field
    without a usable label is keyed ``OTHER``.

    Examples
    --------
    >>> field_key("TOTAL", "Grand Total"), field_key("OTHER", "Merchant ID:"), field_key("OTHER", None)
    ('TOTAL', 'OTHER.MERCHANT_ID', 'OTHER')
    """
    key = normalise_key(type_text)
    if key != OTHER_TYPE:
        return key
    label_key = normalise_key(label or "")
    return f"{OTHER_TYPE}.{label_key}" if label_key else OTHER_TYPE


def pixel_box(bounding_box: Mapping[str, float]) -> tuple[float, float, float, float]:
    """A Textract ``BoundingBox`` (fractions of the page) as ``[x0, y0, x1, y1]`` on the virtual page.

    Examples
    --------
    >>> pixel_box({"Left": 0.25, "Top": 0.1, "Width": 0.5, "Height": 0.0125})
    (250.0, 100.0, 750.0, 112.5)
    """
    left, top = bounding_box["Left"], bounding_box["Top"]
    return (round(left * PAGE_SIZE, _BOX_DECIMALS), round(top * PAGE_SIZE, _BOX_DECIMALS),
            round((left + bounding_box["Width"]) * PAGE_SIZE, _BOX_DECIMALS),
            round((top + bounding_box["Height"]) * PAGE_SIZE, _BOX_DECIMALS))


def import_textract_expense(source: str | Path, *, predictions: str | Path | None = None, skip_invalid: bool = False,
                            join_lines: bool = False) -> tuple[Iterator[KIERecord], ImportReport]:
    """Read AnalyzeExpense responses into prediction-only KIE records.

    Parameters
    ----------
    source : path-like
        A response file (``.json``) or a folder of them (its ``*.json`` files,
        by name, not recursing).
    predictions : path-like, optional
        Not applicable: a response is itself the prediction side. Giving one
        raises :class:`InputError` that says how to join the ground truth.
    skip_invalid : bool, default=False
        Leave out (and count) a file or document with a problem rather than
        stop (:func:`~rpa_sim.records.importers.sources.each_source`).
    join_lines : bool, default=False
        Write each line break of a value (an address on two lines) as a space.

    Returns
    -------
    records : iterator of KIERecord
        One per expense document, lazily, files in name order.
    report : ImportReport
        ``records`` and ``unmapped`` grow as the records are produced; the
        notes that carry counts are added when the iterator is exhausted.

    Raises
    ------
    InputError
        At the call for a missing source, an empty folder or ``predictions``;
        while iterating for a file that is not an AnalyzeExpense response
        (not JSON, no ``ExpenseDocuments``, a confidence outside [0, 100], ...),
        with the file and the field path.

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> response = {"ExpenseDocuments": [{"SummaryFields": [{"Type": {"Text": "TOTAL"},
    ...     "ValueDetection": {"Text": "$9.50", "Confidence": 99.5}}], "LineItemGroups": []}]}
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "receipt.json"
    >>> _ = path.write_text(json.dumps(response))
    >>> records, report = import_textract_expense(path)
    >>> [(r.id, r.prediction.entities) for r in records]  # doctest: +NORMALIZE_WHITESPACE
    [('receipt-1', [PredictedEntity(key='TOTAL', value='$9.50', confidence=0.995, grounding=None, evidence=None,
                                    signals=None)])]
    """
    source = Path(source)
    if predictions is not None:
        raise InputError("--predictions does not apply: an AnalyzeExpense response is the prediction side. "
                         "Import it alone, then join your ground truth (canonical JSONL) to it with "
                         "`rpa-sim score GT.jsonl --predictions IMPORTED.jsonl`", path=str(predictions))
    if source.is_dir():
        files = sorted(p for p in source.glob("*.json") if p.is_file())
        if not files:
            raise InputError("no .json files (expected AnalyzeExpense responses)", path=str(source))
    elif not source.exists():
        raise InputError("no such file or folder", path=str(source))
    else:
        check_input(source)
        files = [source]
    report = ImportReport(FORMAT)
    report.notes.append(
        "AnalyzeExpense has no ground truth: these records are the prediction side. Give the ground truth "
        "as canonical JSONL with the same ids (<file stem>-<n>, n = 1 for a file's first expense document) "
        "and join them with `rpa-sim score GT.jsonl --predictions IMPORTED.jsonl`")
    report.notes.append("confidence = ValueDetection.Confidence / 100; Type and label confidences are not used")
    stats: Counter[str] = Counter()
    records = each_source(files, lambda path: _file_records(path, report.unmapped, stats), report=report,
                          skip_invalid=skip_invalid, join_lines=join_lines, not_lost=_NOT_LOST)
    return _records(records, report, stats), report


def _file_records(path: Path, unmapped: Counter[str], totals: Counter[str]) -> Iterator[KIERecord]:
    """The records of one response; its counts join ``totals`` only once it is read whole."""
    stats: Counter[str] = Counter()
    yield from _Response(str(path), path.stem, load_json(path), unmapped, stats).records()
    totals.update(stats)


def _records(records: Iterator[KIERecord], report: ImportReport, stats: Counter[str]) -> Iterator[KIERecord]:
    for record in records:
        report.records += 1
        yield record
    if stats["other"]:
        report.notes.append("OTHER fields keyed by their printed label as OTHER.<LABEL> (upper case, other "
                            f"characters than letters and digits -> _): {stats['other']}")
    if stats["with_words"]:
        report.notes.append(f"documents with the OCR words of their Blocks, on a virtual {PAGE_SIZE:g} x "
                            f"{PAGE_SIZE:g} px page (Textract gives no page size; distances and IoU are relative, "
                            f"so they are unaffected): {stats['with_words']}")
    if stats["without_words"]:
        report.notes.append("documents without Blocks, so without OCR words: grounding stays unknown (words made "
                            "from the fields' own boxes would locate every value trivially): "
                            f"{stats['without_words']}")


class _Response(FieldChecks):
    """One parsed response file, read with checks that name the field path of any problem."""

    def __init__(self, path: str, stem: str, data: Any, unmapped: Counter, stats: Counter) -> None:
        self.path, self.stem, self.data = path, stem, data
        self.unmapped, self.stats = unmapped, stats

    def error(self, field: str, problem: str) -> InputError:
        return InputError(problem, path=self.path, field=field or None)

    def as_page(self, value: Any, field: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise self.error(field, f"expected a page count or number from 1, got {show(value)}")
        return value

    def records(self) -> Iterator[KIERecord]:
        response = self.as_object(self.data, "")
        if "ExpenseDocuments" not in response:
            raise self.error("ExpenseDocuments", "missing: not an AnalyzeExpense response "
                             f"(top-level keys: {sorted(response)})")
        documents = self.as_list(response["ExpenseDocuments"], "ExpenseDocuments")
        metadata = self.as_object(response.get("DocumentMetadata", {}), "DocumentMetadata")
        pages = self.as_page(metadata.get("Pages", 1), "DocumentMetadata.Pages")
        for index, document in enumerate(documents):
            yield self.record(index, self.as_object(document, f"ExpenseDocuments[{index}]"), pages)

    def record(self, index: int, document: dict[str, Any], pages: int) -> KIERecord:
        where = f"ExpenseDocuments[{index}]"
        entities = []
        for i, field in enumerate(self.as_list(document.get("SummaryFields", []), f"{where}.SummaryFields")):
            entity = self.entity(field, f"{where}.SummaryFields[{i}]", "summary field")
            if entity is not None:
                entities.append(entity)
        groups = []
        item_groups = self.as_list(document.get("LineItemGroups", []), f"{where}.LineItemGroups")
        for g, item_group in enumerate(item_groups):
            group_where = f"{where}.LineItemGroups[{g}]"
            items = self.as_object(item_group, group_where).get("LineItems", [])
            for i, item in enumerate(self.as_list(items, f"{group_where}.LineItems")):
                group = self.line_item(item, f"{group_where}.LineItems[{i}]")
                if group is not None:
                    groups.append(group)
        return KIERecord(id=f"{self.stem}-{index + 1}",
                         prediction=PredictedExtraction(entities=entities, groups=groups),
                         document=self.document(document, where, pages))

    def line_item(self, raw: Any, where: str) -> PredictedGroup | None:
        fields = self.as_object(raw, where).get("LineItemExpenseFields", [])
        entities = []
        for i, field in enumerate(self.as_list(fields, f"{where}.LineItemExpenseFields")):
            entity = self.entity(field, f"{where}.LineItemExpenseFields[{i}]", "line item field")
            if entity is not None:
                entities.append(entity)
        if not entities:
            self.unmapped["line items with no field left (no group written)"] += 1
            return None
        return PredictedGroup(name=LINE_ITEM_GROUP, entities=entities)

    def entity(self, raw: Any, where: str, kind: str) -> PredictedEntity | None:
        field = self.as_object(raw, where)
        field_type = self.as_object(self.required(field, "Type", where), f"{where}.Type")
        type_key = normalise_key(self.as_text(self.required(field_type, "Text", f"{where}.Type"), f"{where}.Type.Text"))
        label = None
        if "LabelDetection" in field:
            label_detection = self.as_object(field["LabelDetection"], f"{where}.LabelDetection")
            label = self.as_text(label_detection.get("Text", ""), f"{where}.LabelDetection.Text")
        if "Currency" in field:
            self.unmapped[f"{kind} currencies (the canonical format has no place for them)"] += 1
        if "GroupProperties" in field:
            self.unmapped[f"{kind} GroupProperties (vendor/receiver grouping; the key is the Type alone)"] += 1
        if type_key == ROW_TYPE:
            self.unmapped[_ROW_FIELDS] += 1
            return None
        if "ValueDetection" not in field:
            self.unmapped[f"{kind}s without a ValueDetection"] += 1
            return None
        detection = self.as_object(field["ValueDetection"], f"{where}.ValueDetection")
        value = self.as_text(detection.get("Text", ""), f"{where}.ValueDetection.Text")
        if value == "":
            self.unmapped[f"{kind}s with an empty value"] += 1
            return None
        raw_confidence = self.required(detection, "Confidence", f"{where}.ValueDetection")
        confidence = self.as_number(raw_confidence, f"{where}.ValueDetection.Confidence")
        if not 0.0 <= confidence <= 100.0:
            raise self.error(f"{where}.ValueDetection.Confidence", f"{show(raw_confidence)} is not in [0, 100]")
        if type_key == OTHER_TYPE:
            self.stats["other"] += 1
        return PredictedEntity(key=field_key(type_key, label), value=value, confidence=confidence / 100.0)

    def document(self, document: dict[str, Any], where: str, pages: int) -> Document | None:
        if "Blocks" not in document:
            self.stats["without_words"] += 1
            return None
        self.stats["with_words"] += 1
        words: dict[int, list[Word]] = {}
        for i, raw in enumerate(self.as_list(document["Blocks"], f"{where}.Blocks")):
            block = self.as_object(raw, f"{where}.Blocks[{i}]")
            if block.get("BlockType") != "WORD":
                continue
            page = self.as_page(block.get("Page", 1), f"{where}.Blocks[{i}].Page")
            text = self.as_text(block.get("Text", ""), f"{where}.Blocks[{i}].Text")
            words.setdefault(page - 1, []).append(Word(text=text, bbox=self.box(block, f"{where}.Blocks[{i}]")))
        count = max([pages, *(page + 1 for page in words)])
        return Document(pages=[Page(width=PAGE_SIZE, height=PAGE_SIZE, words=words.get(p, []))
                               for p in range(count)])

    def box(self, block: dict[str, Any], where: str) -> tuple[float, float, float, float]:
        geometry = self.as_object(self.required(block, "Geometry", where), f"{where}.Geometry")
        where = f"{where}.Geometry.BoundingBox"
        bounding_box = self.as_object(geometry.get("BoundingBox"), where)
        for name in ("Left", "Top", "Width", "Height"):
            value = self.as_number(self.required(bounding_box, name, where), f"{where}.{name}")
            if name in ("Width", "Height") and value < 0:
                raise self.error(f"{where}.{name}", f"{show(value)} is negative")
        return pixel_box(bounding_box)
