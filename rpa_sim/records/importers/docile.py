"""Import DocILE documents (rossumai/docile) into canonical KIE records.

A DocILE dataset folder holds ``annotations/<docid>.json`` (key fields, line
items, page sizes), ``ocr/<docid>.json`` (docTR output), ``pdfs/`` and split
files (``train.json``, ``val.json``, ...: lists of document ids).

Key fields (KILE) become non-grouped entities ``fieldtype -> text``; line-item
fields (LIR) become one group named ``line_item`` per ``line_item_id``. Pages
take their size at 200 dpi from the annotation metadata (DocILE's own image
size), and the docTR words, whose geometry is relative to the page, are scaled
to those pixels; a word's ``segment`` is its docTR block (or line). Boxes and
pages of the annotated fields are not kept: canonical entities have no location.

DocILE has no predictions: predictions in the canonical format (JSON Lines of
``{"id", "prediction"}``) can be joined by document id with ``predictions=``.
See ``docs/importers/docile.md``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from rpa_sim.common.errors import InputError, shown
from rpa_sim.common.formatting import counted
from rpa_sim.common.inputs import check_input
from rpa_sim.records.importers import ImportReport
from rpa_sim.records.importers._json import is_finite_number, load_json, read_record_side
from rpa_sim.records.importers.sources import each_source, loses_nothing
from rpa_sim.records.models import (
    Document,
    Entity,
    Extraction,
    Group,
    KIERecord,
    Page,
    PredictedExtraction,
    Word,
)

__all__ = ["LINE_ITEM_GROUP", "import_docile", "relative_to_pixels"]

LINE_ITEM_GROUP = "line_item"


# --------------------------------------------------------------------------- documents of a split


def _document_ids(source: Path) -> tuple[Path, list[str]]:
    """The dataset folder and the ids of the documents to import, in order."""
    if source.is_dir():
        folder = source
        splits = sorted(source.glob("*.json"))
        if len(splits) > 1:
            names = ", ".join(path.name for path in splits)
            raise InputError(f"several split files ({names}): give the one to import as SRC, "
                             f"e.g. {splits[0]}", path=str(source))
        split = splits[0] if splits else None
    elif not source.exists():
        raise InputError("no such file or folder", path=str(source))
    else:
        check_input(source)
        if source.suffix != ".json":
            raise InputError("expected a DocILE dataset folder or one of its split files (.json)", path=str(source))
        folder, split = source.parent, source
    annotations = folder / "annotations"
    if not annotations.is_dir():
        raise InputError("expected a folder annotations/ beside the split files", path=str(annotations))
    if split is None:
        ids = sorted(path.stem for path in annotations.glob("*.json"))
        if not ids:
            raise InputError("no .json files", path=str(annotations))
        return folder, ids
    ids = load_json(split)
    if not isinstance(ids, list) or not all(isinstance(i, str) and i for i in ids):
        raise InputError(f"expected a list of document ids, got {shown(ids)}", path=str(split))
    seen: set[str] = set()
    for docid in ids:
        if docid in seen:
            raise InputError(f"document {docid!r} is listed twice", path=str(split))
        seen.add(docid)
    return folder, ids


# --------------------------------------------------------------------------- annotations


def _list(data: dict[str, Any], name: str, where: str) -> list[Any]:
    if name not in data:
        raise InputError("missing", path=where, field=name)
    value = data[name]
    if not isinstance(value, list):
        raise InputError(f"expected a list, got {shown(value)}", path=where, field=name)
    return value


def _page_sizes(data: dict[str, Any], where: str) -> list[tuple[float, float]]:
    metadata = data.get("metadata")
    if not isinstance(metadata, dict) or "page_sizes_at_200dpi" not in metadata:
        raise InputError("missing", path=where, field="metadata.page_sizes_at_200dpi")
    sizes = metadata["page_sizes_at_200dpi"]
    field = "metadata.page_sizes_at_200dpi"
    if not isinstance(sizes, list) or not sizes:
        raise InputError(f"expected a list of [width, height], got {shown(sizes)}", path=where, field=field)
    for i, size in enumerate(sizes):
        if not (isinstance(size, list) and len(size) == 2 and all(is_finite_number(v) and v > 0 for v in size)):
            raise InputError(f"expected [width, height] in pixels, got {shown(size)}", path=where,
                             field=f"{field}[{i}]")
    return [(float(width), float(height)) for width, height in sizes]


def _fields(items: list[Any], name: str, where: str, report: ImportReport, *,
            grouped: bool) -> list[tuple[int, str, str]]:
    """``(line_item_id, fieldtype, text)`` of each annotated field (``line_item_id`` 0 when not grouped)."""
    fields: list[tuple[int, str, str]] = []
    for i, item in enumerate(items):
        field = f"{name}[{i}]"
        if not isinstance(item, dict):
            raise InputError(f"expected an object, got {shown(item)}", path=where, field=field)
        fieldtype = item.get("fieldtype")
        if not isinstance(fieldtype, str) or not fieldtype:
            problem = "missing" if fieldtype is None else f"expected a field type, got {shown(fieldtype)}"
            raise InputError(problem, path=where, field=f"{field}.fieldtype")
        line_item = 0
        if grouped:
            item_id = item.get("line_item_id")
            if not isinstance(item_id, int) or isinstance(item_id, bool):
                problem = "missing" if item_id is None else f"expected an integer, got {shown(item_id)}"
                raise InputError(problem, path=where, field=f"{field}.line_item_id")
            line_item = item_id
        text = item.get("text")
        if text is None:
            # DocILE allows fields without text (evaluation is by location); a canonical entity needs a value.
            report.unmapped[f"{name} without text"] += 1
            continue
        if not isinstance(text, str):
            raise InputError(f"expected a string, got {shown(text)}", path=where, field=f"{field}.text")
        fields.append((line_item, fieldtype, text))
    return fields


def _ground_truth(data: dict[str, Any], where: str, report: ImportReport) -> Extraction:
    entities = [Entity(key=fieldtype, value=text)
                for _, fieldtype, text in _fields(_list(data, "field_extractions", where), "field_extractions",
                                                  where, report, grouped=False)]
    items: dict[int, list[Entity]] = {}
    for item_id, fieldtype, text in _fields(_list(data, "line_item_extractions", where), "line_item_extractions",
                                            where, report, grouped=True):
        items.setdefault(item_id, []).append(Entity(key=fieldtype, value=text))
    headers = len(_list(data, "line_item_headers", where)) if "line_item_headers" in data else 0
    if headers:
        report.unmapped["line_item_headers (column titles, not part of the LIR task)"] += headers
    return Extraction(entities=entities,
                      groups=[Group(name=LINE_ITEM_GROUP, entities=items[i]) for i in sorted(items)])


# --------------------------------------------------------------------------- OCR


def relative_to_pixels(geometry: Any, width: float, height: float) -> tuple[float, float, float, float] | None:
    """A docTR box ``[[x0, y0], [x1, y1]]`` (fractions of the page) in pixels, or None when malformed.

    Examples
    --------
    >>> relative_to_pixels([[0.25, 0.5], [0.75, 0.625]], 1000, 800)
    (250.0, 400.0, 750.0, 500.0)
    >>> relative_to_pixels([[0.75, 0.5], [0.25, 0.625]], 1000, 800) is None
    True
    """
    if not (isinstance(geometry, list) and len(geometry) == 2
            and all(isinstance(point, list) and len(point) == 2 and all(is_finite_number(v) for v in point)
                    for point in geometry)):
        return None
    (x0, y0), (x1, y1) = geometry
    if x1 < x0 or y1 < y0:
        return None
    return x0 * width, y0 * height, x1 * width, y1 * height


def _children(node: Any, name: str, field: str, where: str) -> list[Any]:
    """The list ``node[name]`` of a docTR page, block or line."""
    if not isinstance(node, dict) or not isinstance(node.get(name), list):
        raise InputError(f"expected an object with a list {name!r}, got {shown(node)}", path=where, field=field)
    return node[name]


def _words(page: Any, number: int, size: tuple[float, float], where: str,
           segment: Literal["block", "line"]) -> list[Word]:
    field = f"pages[{number}]"
    words = []
    line_number = 0
    for b, block in enumerate(_children(page, "blocks", field, where)):
        for n, line in enumerate(_children(block, "lines", f"{field}.blocks[{b}]", where)):
            lfield = f"{field}.blocks[{b}].lines[{n}]"
            for w, word in enumerate(_children(line, "words", lfield, where)):
                wfield = f"{lfield}.words[{w}]"
                if not isinstance(word, dict) or not isinstance(word.get("value"), str):
                    raise InputError(f"expected a word with a string value, got {shown(word)}", path=where,
                                     field=wfield)
                bbox = relative_to_pixels(word.get("geometry"), *size)
                if bbox is None:
                    raise InputError(f"expected [[x0, y0], [x1, y1]] with x0 <= x1, y0 <= y1, "
                                     f"got {shown(word.get('geometry'))}", path=where, field=f"{wfield}.geometry")
                words.append(Word(text=word["value"], bbox=bbox, segment=b if segment == "block" else line_number))
            line_number += 1
    return words


def _pages(ocr_path: Path, sizes: list[tuple[float, float]], segment: Literal["block", "line"],
           report: ImportReport) -> list[Page]:
    if not ocr_path.exists():  # anything else there is read, so that a pipe or a folder is refused
        report.unmapped["documents without an OCR file (pages have no words)"] += 1
        return [Page(width=width, height=height) for width, height in sizes]
    ocr = load_json(ocr_path)
    where = str(ocr_path)
    pages = ocr.get("pages") if isinstance(ocr, dict) else None
    if not isinstance(pages, list):
        raise InputError(f"expected a docTR export with pages, got {shown(ocr)}", path=where)
    if len(pages) != len(sizes):
        raise InputError(f"{len(pages)} pages, but the annotation gives {len(sizes)} page sizes", path=where,
                         field="pages")
    return [Page(width=width, height=height, words=_words(page, i, (width, height), where, segment))
            for i, (page, (width, height)) in enumerate(zip(pages, sizes))]


# --------------------------------------------------------------------------- predictions


# --------------------------------------------------------------------------- entry point


@dataclass(frozen=True)
class _Options:
    folder: Path
    segment: Literal["block", "line"]


def _record(docid: str, options: _Options, report: ImportReport) -> KIERecord:
    path = options.folder / "annotations" / f"{docid}.json"
    if not path.exists():  # anything else there is read, so that a pipe or a folder is refused
        raise InputError(f"no annotation file for document {docid!r} of the split", path=str(path))
    data = load_json(path)
    where = str(path)
    if not isinstance(data, dict):
        raise InputError(f"expected a JSON object, got {shown(data)}", path=where)
    ground_truth = _ground_truth(data, where, report)
    pages = _pages(options.folder / "ocr" / f"{docid}.json", _page_sizes(data, where), options.segment, report)
    return KIERecord(id=docid, ground_truth=ground_truth, document=Document(pages=pages))


def _records(ids: list[str], options: _Options, predictions: dict[str, PredictedExtraction] | None,
             report: ImportReport, *, skip_invalid: bool) -> Iterator[KIERecord]:
    missing = []

    def read(docid: str) -> Iterator[KIERecord]:
        record = _record(docid, options, report)
        if predictions is not None:
            if docid not in predictions:
                missing.append(docid)
            record = record.model_copy(update={"prediction": predictions.get(docid, PredictedExtraction())})
        yield record

    # what the report counts loses no value: fields without text give none, headers and missing OCR are no values
    for record in each_source(ids, read, report=report, skip_invalid=skip_invalid, not_lost=loses_nothing):
        report.records += 1
        yield record
    if predictions is not None:
        orphans = len(predictions.keys() - set(ids))
        if orphans:
            report.unmapped["predictions without a document of the split"] += orphans
        if missing:
            missed = counted(len(missing), "document has", "documents have")
            report.notes.append(f"{missed} no prediction (scored as predicting nothing): "
                                + ", ".join(missing[:10]) + (" ..." if len(missing) > 10 else ""))


def import_docile(source: str | Path, *, predictions: str | Path | None = None,
                  segment: Literal["block", "line"] = "block",
                  skip_invalid: bool = False) -> tuple[Iterator[KIERecord], ImportReport]:
    """Read the documents of a DocILE split into KIE records with ground truth and OCR words.

    Parameters
    ----------
    source : path-like
        A DocILE dataset folder, or one of its split files (``val.json``). A
        folder with one split file imports that split; with none, every
        ``annotations/*.json`` (in id order); with several, it is an error.
    predictions : path-like, optional
        Canonical KIE JSON Lines (``.jsonl`` or ``.jsonl.gz``) holding the
        prediction side, joined on the document id. A document without one
        gets an empty prediction; predictions of other documents are counted.
    segment : {"block", "line"}, default="block"
        What a word's ``segment`` is: its docTR block index on the page
        (values that span lines, as addresses do, can be located), or its
        line index on the page.
    skip_invalid : bool, default=False
        Leave out (and list) a document whose annotation or OCR has a problem
        rather than stop (:func:`~rpa_sim.records.importers.sources.each_source`);
        a bad split or predictions file still stops the import.

    Returns
    -------
    records : iterator of KIERecord
        Lazy, in split order; each has ``ground_truth`` and ``document``, and
        ``prediction`` only when ``predictions`` is given.
    report : ImportReport
        Filled in as the records are consumed.

    Raises
    ------
    InputError
        For a bad source, split file or predictions file here, and for
        malformed annotations or OCR (file, JSON field path, the bad value)
        while iterating.
    """
    if segment not in ("block", "line"):
        raise ValueError(f"segment must be 'block' or 'line', got {segment!r}")
    folder, ids = _document_ids(Path(source))
    joined = None if predictions is None else read_record_side(Path(predictions), "prediction", PredictedExtraction)
    report = ImportReport("docile")
    if joined is None:
        report.notes.append("DocILE has ground truth only: the records have no prediction; join canonical "
                            "predictions with `rpa-sim score GT --predictions PRED` or --predictions")
    report.notes.append("the boxes and pages of the annotated fields are not kept (canonical entities have no "
                        "location); DocILE's own metrics match fields by location, rpa-sim by text")
    return _records(ids, _Options(folder, segment), joined, report, skip_invalid=skip_invalid), report
